"""A loopback runtime is never reached through HTTP(S)_PROXY: with a proxy set that answers
nothing, runs against 127.0.0.1 and localhost still work (a proxied request would fail)."""

from __future__ import annotations

import pytest

from benchrig.drivers.httpstream import is_loopback
from benchrig.drivers.ollama import OllamaDriver
from benchrig.drivers.openai import OpenAIDriver
from benchrig.local.embedded_server import EmbeddedServer, ServerConfig, free_port
from tests.helpers.loopback import Loopback, Reply, ndjson
from tests.helpers.ollama import done, line, routes
from tests.helpers.ollama import request as ollama_request
from tests.helpers.openai import USAGE, chunk, stream_reply
from tests.helpers.openai import request as openai_request

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                   "all_proxy")


@pytest.fixture
def dead_proxy(monkeypatch: pytest.MonkeyPatch) -> str:
    """Every proxy variable pointing at a port where nothing listens; NO_PROXY unset."""
    proxy = f"http://127.0.0.1:{free_port()}"
    for name in PROXY_VARIABLES:
        monkeypatch.setenv(name, proxy)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    return proxy


def test_loopback_hosts() -> None:
    for url in ("http://127.0.0.1:8080/v1", "http://127.8.0.1", "http://localhost:11434",
                "http://LOCALHOST.:1", "http://[::1]:8080/v1", "http://api.localhost/v1"):
        assert is_loopback(url), url
    for url in ("https://api.openai.com/v1", "http://10.0.0.2:8080", "http://[::2]/",
                "http://localhost.example.com/"):
        assert not is_loopback(url), url


@pytest.mark.usefixtures("dead_proxy")
@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_openai_on_loopback_ignores_the_proxy(host: str) -> None:
    reply = stream_reply(chunk({"content": "hi"}), chunk({}, "stop"), chunk(None, usage=USAGE),
                         "[DONE]")
    with Loopback({("POST", "/v1/chat/completions"): reply}) as server:
        url = server.url.replace("127.0.0.1", host)
        out = OpenAIDriver().run(openai_request(f"{url}/v1"))
    assert out.transcript.answer == "hi" and out.metrics.output_tokens == 57


@pytest.mark.usefixtures("dead_proxy")
def test_ollama_on_loopback_ignores_the_proxy() -> None:
    chat = Reply(ndjson(line("hi"), done()), content_type="application/x-ndjson")
    with Loopback(routes(chat)) as server:
        out = OllamaDriver().run(ollama_request(url=server.url))
    assert out.transcript.answer == "hi"


@pytest.mark.model
@pytest.mark.usefixtures("dead_proxy")
def test_benchrig_serve_starts_and_answers_with_a_proxy_set(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # proxied polls never answer
    monkeypatch.setattr("benchrig.local.embedded_server.STARTUP_TIMEOUT_S", 60.0)
    with EmbeddedServer(ServerConfig(context_size=1024, threads=1)) as server:
        out = OpenAIDriver().run(openai_request(server.base_url, model="smollm2",
                                                task="valid-brackets", max_tokens=4))
    assert out.transcript.finish_reason == "length"
    assert out.metrics.engine["server_perf"]["prompt_n"] > 0  # the untimed reads got through
