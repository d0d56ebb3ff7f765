"""Preflight: a run whose server is down, whose model is missing, whose key is unset or
refused, whose agent is not installed or whose provider cannot be reached stops before any
attempt — one line on stderr, exit 2, no result and no transcript written."""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

from benchrig.core.errors import UsageError
from benchrig.drivers import get_driver
from tests.conftest import ROOT, cli_call
from tests.helpers.loopback import Loopback, Reply

RUN_SH = [str(ROOT / "scripts" / "run.sh")]


def dead_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def _refused_before_any_attempt(ran: Any, results_dir: Path) -> str:
    assert ran.code == 2, (ran.code, ran.stdout, ran.stderr)
    assert "Traceback" not in ran.stderr
    lines = ran.stderr.strip().splitlines()
    assert len(lines) == 1, ran.stderr
    assert list(results_dir.rglob("*")) == []  # no result, no transcript, no lock left
    return str(lines[0])


def test_ollama_down_writes_nothing(results_dir: Path) -> None:
    port = dead_port()
    ran = cli_call("run", "lru-cache", "flatten-dict", "-m", "qwen3", "-d", "ollama", "-p",
                   f"http://127.0.0.1:{port}", "--runs", "3", results_dir=results_dir)
    line = _refused_before_any_attempt(ran, results_dir)
    assert f"Ollama is not reachable at http://127.0.0.1:{port}/api/tags" in line


def test_a_model_ollama_does_not_have_is_named_with_the_ones_it_has(results_dir: Path) -> None:
    tags = {"models": [{"name": "llama3.2:latest", "model": "llama3.2:latest"}]}
    with Loopback({("GET", "/api/tags"): Reply.json(tags)}) as server:
        ran = cli_call("run", "lru-cache", "-m", "qwen3", "-d", "ollama", "-p", server.url,
                       results_dir=results_dir)
        assert [path for _, path, _ in server.requests] == ["/api/tags"]  # no chat
    line = _refused_before_any_attempt(ran, results_dir)
    assert "has no model qwen3:latest; it has llama3.2:latest; pull it" in line


def test_an_openai_server_without_the_model_or_refusing_the_key(results_dir: Path) -> None:
    listing = {"object": "list", "data": [{"id": "served-model", "object": "model"}]}
    with Loopback({("GET", "/v1/models"): Reply.json(listing)}) as server:
        ran = cli_call("run", "lru-cache", "-m", "other", "-d", "openai", "-p",
                       f"{server.url}/v1", results_dir=results_dir)
    assert "has no model other; it has served-model" in _refused_before_any_attempt(
        ran, results_dir)
    refused = {("GET", "/v1/models"): Reply.json({"error": "bad key"}, 401)}
    with Loopback(refused) as server:
        ran = cli_call("run", "lru-cache", "-m", "m", "-d", "openai", "-p",
                       f"{server.url}/v1", results_dir=results_dir,
                       env={"OPENAI_API_KEY": "wrong"})
        assert all(path == "/v1/models" for _, path, _ in server.requests)
    assert "refused the key" in _refused_before_any_attempt(ran, results_dir)


def test_preflight_passes_a_listed_model_and_a_server_without_a_listing() -> None:
    tags = {"models": [{"name": "qwen3:latest", "model": "qwen3:latest"}]}
    with Loopback({("GET", "/api/tags"): Reply.json(tags)}) as server:
        get_driver("ollama").preflight("qwen3", server.url)
        get_driver("ollama").preflight("qwen3:latest", server.url)
        with pytest.raises(UsageError, match="no model qwen3:8b"):
            get_driver("ollama").preflight("qwen3:8b", server.url)
    with Loopback({}) as server:  # no GET /v1/models (404): the server is taken at its word
        get_driver("openai").preflight("anything", f"{server.url}/v1")


def test_pi_without_its_provider_key_writes_nothing(results_dir: Path, tmp_path: Path) -> None:
    pi = tmp_path / "pi"
    pi.write_text("#!/bin/sh\nexit 0\n")
    pi.chmod(0o755)
    env = {"BENCHRIG_PI_BIN": str(pi), "ZAI_API_KEY": "",
           "PI_CODING_AGENT_DIR": str(tmp_path / "no-pi-home")}
    ran = cli_call("run", "lru-cache", "-m", "glm-4.6", "-d", "pi", "-p", "zai",
                   results_dir=results_dir, env=env)
    assert "pi: provider zai needs ZAI_API_KEY set" in _refused_before_any_attempt(
        ran, results_dir)


def test_run_sh_pi_zai_with_no_network_exits_2_and_writes_nothing(
        results_dir: Path, tmp_path: Path) -> None:
    """The issue's command in a network namespace of its own (no route anywhere)."""
    if subprocess.run(["unshare", "-n", "true"], capture_output=True,
                      check=False).returncode != 0:
        pytest.skip("no network namespace here")
    pi = tmp_path / "pi"
    pi.write_text("#!/bin/sh\nexit 0\n")
    pi.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env |= {"BENCHRIG_PI_BIN": str(pi), "ZAI_API_KEY": "key",
            "BENCHRIG_RESULTS_DIR": str(results_dir)}
    command = shlex.join([*RUN_SH, "lru-cache", "glm-4.6", "pi", "zai"])
    done = subprocess.run(["unshare", "-n", "sh", "-c", command], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "pi: provider zai: cannot reach api.z.ai:443" in done.stderr
    assert list(results_dir.rglob("*")) == []


@pytest.mark.parametrize("agent", ["claude", "codex", "pi"])
def test_a_missing_agent_binary_writes_nothing(results_dir: Path, tmp_path: Path,
                                               agent: str) -> None:
    """The binary named is not there (an agent installed on PATH or in .agents/ would be
    found otherwise: the explicit variable is what makes it missing on any machine)."""
    missing = tmp_path / "no-such-binary"
    env = {f"BENCHRIG_{agent.upper()}_BIN": str(missing)}
    ran = cli_call("run", "lru-cache", "-m", "m", "-d", agent, results_dir=results_dir,
                   env=env)
    line = _refused_before_any_attempt(ran, results_dir)
    assert f"BENCHRIG_{agent.upper()}_BIN={missing} is not an executable file" in line
