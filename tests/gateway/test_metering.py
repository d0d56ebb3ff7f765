"""Metering: each model call recorded from the wire, grouped by session (figures never mix
under concurrency), cost from the price table and null when the price is unknown."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
import pytest

from benchrig.gateway import Gateway, GatewaySpec
from benchrig.gateway.prices import BUNDLED, PriceTable
from benchrig.gateway.scripted import ScriptedBackend
from benchrig.gateway.upstream import UpstreamBackend
from tests.gateway.helpers import DONE, WRITE, chat, scripted, sse_chunks
from tests.helpers.loopback import Loopback, Reply
from tests.helpers.openai import USAGE, chunk, stream_reply

TOOL = {"type": "function", "function": {"name": "write"}}


def test_every_call_is_recorded_with_its_figures() -> None:
    with scripted(WRITE, DONE) as (_, session):
        first = chat(session.base_url, stream=True, tools=[TOOL])
        chat(session.base_url, tools=[TOOL])
        calls = session.calls()
    one, two = calls
    assert (one.index, two.index) == (0, 1) and one.session == session.token
    assert one.stream and not two.stream
    assert one.tool_calls == ("write",) and one.finish_reason == "tool_calls"
    assert two.tool_calls == () and two.finish_reason == "stop"
    assert one.ttft_ms is not None and 0 < one.ttft_ms <= one.wall_ms
    assert one.input_tokens and one.output_tokens and one.tokens_source == "server"
    assert one.response_bytes == len(first.content) and one.request_bytes > 0
    assert (one.cost_usd, one.cost_source) == (0.0, "scripted stand-in model: no charge")
    assert one.status == "ok"


def test_sessions_never_mix_under_concurrency() -> None:
    backend = ScriptedBackend([{"content": "a" * 40}] * 4, piece_delay_s=0.002)
    with Gateway(backend) as gateway:
        sessions = [gateway.open_session(f"attempt {i}") for i in range(6)]
        counts = {s.token: 2 + i % 3 for i, s in enumerate(sessions)}

        def agent(session_index: int) -> None:
            session = sessions[session_index]
            for _ in range(counts[session.token]):
                assert chat(session.base_url, stream=True).status_code == 200

        threads = [threading.Thread(target=agent, args=(i,)) for i in range(len(sessions))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for session in sessions:
            calls = session.calls()
            assert len(calls) == counts[session.token]
            assert {c.session for c in calls} == {session.token}
            assert sorted(c.index for c in calls) == list(range(len(calls)))


def test_an_unknown_or_closed_session_is_a_404() -> None:
    with scripted(DONE) as (gateway, session):
        assert chat(f"{gateway.url}/s/guessed/v1").status_code == 404
        assert chat(f"{gateway.url}/v1").status_code == 404  # no default session per run
        gateway.close_session(session)
        assert chat(session.base_url).status_code == 404
        assert session.calls() == ()


def test_the_gateway_listens_on_loopback_only() -> None:
    with scripted(DONE) as (gateway, _):
        assert gateway.url.startswith("http://127.0.0.1:")
        assert gateway._server.server_address[0] == "127.0.0.1"


def upstream_reply() -> object:
    return stream_reply(
        chunk({"role": "assistant", "content": None}), chunk({"content": "Hi"}),
        chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                               "function": {"name": "read", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"path":"a"}'}}]}),
        chunk({}, "tool_calls"), chunk(None, usage=USAGE), "[DONE]")


def test_an_upstream_call_is_forwarded_streamed_with_its_counts_and_no_price_is_null(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UPSTREAM_KEY", "sk-secret")
    with Loopback({("POST", "/v1/chat/completions"): upstream_reply()}) as upstream, \
            Gateway(UpstreamBackend(f"{upstream.url}/v1", api_key_env="UPSTREAM_KEY"),
                    prices=PriceTable([BUNDLED])) as gateway:
        session = gateway.open_session()
        reply = chat(session.base_url, model="m").json()  # the agent sends no key
        (sent,) = upstream.posted("/v1/chat/completions")
        assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
        assert upstream.headers[0]["authorization"] == "Bearer sk-secret"
        (call,) = session.calls()
    message = reply["choices"][0]["message"]
    assert message["content"] == "Hi"
    assert message["tool_calls"][0]["function"] == {"name": "read", "arguments": '{"path":"a"}'}
    assert (call.input_tokens, call.output_tokens, call.tokens_source) == (812, 57, "server")
    assert call.cost_usd is None
    assert call.cost_source == "no price for upstream/m in the price table"


@pytest.mark.parametrize("model", ["smollm2", "qwen3"])
def test_an_upstream_is_asked_for_the_runs_model_whatever_its_name(model: str) -> None:
    """"smollm2" chooses the embedded model only where the embedded back end runs: an
    upstream named it was asked for its own default instead (the agent's request passed on)
    and the call metered as "smollm2" whatever the upstream served. Ollama has a smollm2."""
    with Loopback({("POST", "/v1/chat/completions"): upstream_reply()}) as upstream, \
            Gateway(GatewaySpec(backend="upstream", model=model,
                                base_url=f"{upstream.url}/v1").build()) as gateway:
        session = gateway.open_session()
        chat(session.base_url, model="what-the-agent-asked")
        (sent,) = upstream.posted("/v1/chat/completions")
        (call,) = session.calls()
    assert sent["model"] == call.model == model
    assert gateway.backend.settings()["model"] == model


def test_a_gateway_given_no_model_passes_each_clients_on() -> None:
    """`benchrig serve --upstream URL` without -m: the clients name their models."""
    with Loopback({("POST", "/v1/chat/completions"): upstream_reply()}) as upstream, \
            Gateway(GatewaySpec(backend="upstream",
                                base_url=f"{upstream.url}/v1").build()) as gateway:
        session = gateway.open_session()
        chat(session.base_url, model="what-the-client-asked")
        (sent,) = upstream.posted("/v1/chat/completions")
        (call,) = session.calls()
    assert sent["model"] == call.model == "what-the-client-asked"


def test_a_users_price_table_extends_the_bundled_one(tmp_path: Path) -> None:
    mine = tmp_path / "prices.toml"
    mine.write_text('[upstream."m"]\ninput = 1.0\noutput = 10.0\n')
    with Loopback({("POST", "/v1/chat/completions"): upstream_reply()}) as upstream, \
            Gateway(UpstreamBackend(f"{upstream.url}/v1"),
                    prices=PriceTable([BUNDLED, mine])) as gateway:
        session = gateway.open_session()
        chat(session.base_url, model="m")
        (call,) = session.calls()
    assert call.cost_usd == pytest.approx((812 * 1.0 + 57 * 10.0) / 1e6)


def test_an_upstream_failure_is_a_502_with_the_reason_not_a_500() -> None:
    with Gateway(UpstreamBackend("http://127.0.0.1:9/v1")) as gateway:
        session = gateway.open_session()
        response = chat(session.base_url, stream=True)
        (call,) = session.calls()
    assert response.status_code == 502
    assert "the back end failed" in response.json()["error"]["message"]
    assert call.status.startswith("back end failed")


def test_health_and_models() -> None:
    with scripted(DONE) as (gateway, session):
        assert httpx.get(f"{gateway.url}/health", trust_env=False).status_code == 200
        models = httpx.get(f"{session.base_url}/models", trust_env=False).json()
        assert [m["id"] for m in models["data"]] == ["scripted"]


def test_32_concurrent_streams_lose_no_token_and_no_count() -> None:
    text = "".join(f"w{i:03d} " for i in range(100))  # 500 characters, 125 pieces
    backend = ScriptedBackend([{"content": text}], piece_delay_s=0.001)
    with Gateway(backend) as gateway:
        sessions = [gateway.open_session(str(i)) for i in range(32)]
        got: dict[str, str] = {}

        def stream(session_index: int) -> None:
            session = sessions[session_index]
            response = chat(session.base_url, stream=True,
                            stream_options={"include_usage": True})
            chunks = [c for c in sse_chunks(response)[:-1] if c["choices"]]
            got[session.token] = "".join(c["choices"][0]["delta"].get("content") or ""
                                         for c in chunks)

        threads = [threading.Thread(target=stream, args=(i,)) for i in range(32)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(got) == 32 and set(got.values()) == {text}
    for session in sessions:
        (call,) = session.calls()
        assert call.output_tokens == 125 and call.status == "ok"
        assert call.ttft_ms is not None and call.decode_ms is not None


def test_an_upstreams_400_is_passed_on_as_a_400_with_its_reason() -> None:
    refusal = Reply.json({"error": {"message": "context too long"}}, 400)
    with Loopback({("POST", "/v1/chat/completions"): refusal}) as upstream, \
            Gateway(UpstreamBackend(f"{upstream.url}/v1")) as gateway:
        session = gateway.open_session()
        response = chat(session.base_url)
    assert response.status_code == 400
    assert "context too long" in response.json()["error"]["message"]


def test_an_upstream_stream_cut_mid_body_ends_with_an_error_and_is_recorded() -> None:
    cut = stream_reply(chunk({"content": "Hi"}), chunk({"content": " there"}), complete=False)
    with Loopback({("POST", "/v1/chat/completions"): cut}) as upstream, \
            Gateway(UpstreamBackend(f"{upstream.url}/v1")) as gateway:
        session = gateway.open_session()
        response = chat(session.base_url, stream=True)
        (call,) = session.calls()
    assert response.status_code == 200  # the stream had begun
    assert '"type":"server_error"' in response.text and "[DONE]" not in response.text
    assert call.status.startswith("back end failed mid-stream")


def test_kept_connections_serve_one_call_after_another() -> None:
    with Loopback({("POST", "/v1/chat/completions"): upstream_reply()}) as upstream, \
            Gateway(UpstreamBackend(f"{upstream.url}/v1")) as gateway:
        session = gateway.open_session()
        for _ in range(5):
            assert chat(session.base_url, stream=True).status_code == 200
        calls = session.calls()
    assert [c.output_tokens for c in calls] == [57] * 5


def test_a_refused_call_processed_nothing_so_the_totals_stay_known() -> None:
    from benchrig.gateway.attempt_figures import summarize

    with scripted(DONE, DONE) as (_, session):
        chat(session.base_url)
        chat(session.base_url, tool_choice="required")  # refused by the back end: a 400
        calls = session.calls()
    assert calls[1].status.startswith("refused")
    assert (calls[1].input_tokens, calls[1].output_tokens) == (0, 0)
    totals = summarize(calls)
    assert totals["output_tokens"] == calls[0].output_tokens
    assert totals["cost_usd"] == 0.0
    # its zero is exact, not counted by BenchRig: the served calls' source stands
    assert calls[0].tokens_source == "server"
    assert totals["tokens_source"] == "server"


def test_a_refused_calls_zero_tokens_say_where_they_come_from() -> None:
    # A count always says its source: the refused call's zeros were stored with a null
    # source, as an unknown count is, and only the status hinted they were exact.
    from benchrig.gateway.metering import reached_model

    with scripted(DONE, DONE) as (_, session):
        chat(session.base_url, tool_choice="required")  # refused by the back end: a 400
        chat(session.base_url)
        refused, served = session.calls()
    assert (refused.input_tokens, refused.output_tokens) == (0, 0)
    assert refused.tokens_source == "refused"
    assert refused.to_json()["tokens_source"] == "refused"  # as calls_detail keeps it
    assert not reached_model(refused) and reached_model(served)


def test_a_call_whose_tokens_benchrig_counted_still_lowers_the_source() -> None:
    from dataclasses import replace

    from benchrig.gateway.attempt_figures import summarize

    with scripted(DONE, DONE, DONE) as (_, session):
        chat(session.base_url)
        chat(session.base_url, tool_choice="required")  # refused: no model saw it
        chat(session.base_url)
        served, refused, counted = session.calls()
    counted = replace(counted, tokens_source="counted")  # as when BenchRig tokenized it
    assert summarize([served, refused, counted])["tokens_source"] == "counted"
    assert summarize([served, refused])["tokens_source"] == "server"
    assert summarize([refused])["tokens_source"] == "server"  # zeros, exact: as no call
