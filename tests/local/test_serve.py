"""`benchrig serve`: the embedded model behind a real OpenAI-compatible server on loopback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

from benchrig.local.embedded_server import EmbeddedServer, ServerConfig
from tests.conftest import ROOT

pytestmark = pytest.mark.model


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_server_answers_list_of_parts_content_and_stops_cleanly() -> None:
    with EmbeddedServer(ServerConfig(context_size=2048)) as server:
        assert server.base_url.startswith("http://127.0.0.1:")
        models = httpx.get(f"{server.base_url}/models", timeout=10).json()
        assert [m["id"] for m in models["data"]] == ["smollm2"]
        body = {"model": "smollm2", "max_tokens": 8, "temperature": 0,
                "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]}
        reply = httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=60).json()
        assert reply["usage"]["completion_tokens"] > 0
        recorded = httpx.get(f"{server.base_url}/benchrig/server", timeout=10).json()
        assert recorded == server.settings()
        assert (recorded["chat_format"], recorded["threads"]) == ("chatml", server.threads)
        assert recorded["interrupt_requests"] is False
        assert server.proc is not None
        pid = server.proc.pid
    assert not alive(pid)


def test_cli_prints_the_base_url_and_stops_on_ctrl_c() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "benchrig.cli", "serve", "--context-size",
                             "1024"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
    assert httpx.get(f"{url}/models", timeout=10).status_code == 200
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 0
    time.sleep(0.2)
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/models", timeout=2)
