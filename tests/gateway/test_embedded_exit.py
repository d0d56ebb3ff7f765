"""The embedded back end at exit: a call still generating (its agent killed at a timeout)
is stopped before the model is freed, so BenchRig exits cleanly instead of crashing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.model

PROGRAM = """
import threading, time, httpx
from benchrig.gateway import GatewaySpec, gateway_session
spec = GatewaySpec(backend="embedded", context_size=2048, threads=1)
tool = {"type": "function", "function": {"name": "note"}}
body = {"model": "m", "max_tokens": 1900, "tools": [tool], "messages": [
    {"role": "system", "content": "Answer at length."},
    {"role": "user", "content": "Write a very long story about a cat."}]}
with gateway_session(spec) as session:
    def call():
        try:
            httpx.post(session.base_url + "/chat/completions", json=body, timeout=600)
        except Exception:
            pass
    threading.Thread(target=call, daemon=True).start()
    time.sleep(3)  # the call is generating, unstreamed, holding the model
print("exiting", flush=True)
"""


def test_exit_while_a_call_generates_is_clean() -> None:
    done = subprocess.run([sys.executable, "-c", PROGRAM], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert "exiting" in done.stdout
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
