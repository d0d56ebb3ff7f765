"""pi on a hosted provider whose API is OpenAI's (z.ai: Chat Completions; OpenAI: pi speaks
Responses, a front of the gateway) goes through a gateway session: pi is given the session
as the provider's base URL and no key; the gateway's upstream back end holds the key, read
from the environment, and meters every call. No network here: the provider is a scripted
stand-in on loopback answering in OpenAI's documented Chat Completions stream shape (usage
in the last chunk), in place of the provider's API (pi.GATEWAY_PROVIDERS)."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest

from benchrig.drivers import get_driver, pi
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
from benchrig.resultio.files import validate
from benchrig.spec import load_task
from tests.conftest import ROOT
from tests.gateway.test_pi_gateway import pi as pi_cli  # noqa: F401 (the fixture)
from tests.helpers.standin import USAGE, StandIn


@pytest.mark.agent
@pytest.mark.parametrize(("provider", "model"), [("zai", "glm-4.7"),
                                                 ("openai", "gpt-4.1-mini")])
def test_pi_on_a_hosted_provider_is_metered_and_never_sees_the_key(
        provider: str, model: str, pi_cli: Path, tmp_path: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    key = f"sk-benchrig-test-{secrets.token_hex(8)}"
    variable = pi.PROVIDER_VARIABLES[provider][0]
    monkeypatch.setenv(variable, key)
    task = load_task(ROOT / "tasks" / "lru-cache.md")
    with StandIn(prefer=("write",)) as upstream:
        monkeypatch.setitem(pi.GATEWAY_PROVIDERS, provider, f"{upstream.url}/v1")
        done = run_attempt(task, model, get_driver("pi"), provider,
                           settings_for(task, Overrides()), tmp_path / "results", agent="pi")
    r = done.result
    validate(r)
    assert r["result"] == "pass", r.get("error")
    calls = upstream.model_requests()
    assert len(calls) >= 2  # the tool call, then the reply to its result
    # the key went upstream from the gateway, never to pi
    assert {s.headers.get("Authorization") or s.headers.get("authorization")
            for s in calls} == {f"Bearer {key}"}
    assert variable not in r["settings"]["agent_env"]
    assert key not in json.dumps(r) and key not in done.path.read_text()
    # the figures of record are the gateway's: the provider's own usage, summed per call
    m = r["metrics"]
    gateway = m["engine"]["gateway"]
    assert gateway["calls"] == len(calls) and gateway["tool_calls"] >= 1
    assert (m["input_tokens"], m["output_tokens"]) == (USAGE["input"] * len(calls),
                                                       USAGE["output"] * len(calls))
    assert m["input_tokens_source"] == "server"
    assert m["reported_source"] == "pi's own output"
    # no price for the model in the gateway's table: unknown, never 0
    assert m["cost_usd"] is None and "no price" in m["cost_source"]


@pytest.mark.parametrize("provider", ["zai", "openai"])
def test_through_the_gateway_the_key_must_be_in_the_environment(
        provider: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """pi's own login cannot stand in: the gateway, not pi, sends the key."""
    from benchrig.core.errors import UsageError

    fake = tmp_path / "pi"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    home = tmp_path / "pi-home"
    home.mkdir()
    (home / "auth.json").write_text(json.dumps({provider: {"type": "api_key", "key": "k"}}))
    monkeypatch.setenv("BENCHRIG_PI_BIN", str(fake))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(home))
    for name in pi.PROVIDER_VARIABLES[provider]:
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(UsageError, match=r"needs .* set$"):
        get_driver("pi").preflight("m", provider)
