"""bench/paced_server.py for tests: an OpenAI-compatible server answering after a fixed delay."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from benchrig.local.embedded_server import free_port
from tests.conftest import ROOT


@contextmanager
def paced(delay_s: float, tokens: int = 8, rate: float = 100_000, per_event: int = 4,
          per_write: int = 64, server_info: dict[str, object] | None = None
          ) -> Iterator[str]:
    """The server in its own process; yields its OpenAI base URL (`…/v1`). Every answer
    starts `delay_s` after its request and streams `tokens` tokens at once after that (or,
    given a `rate`, at that many tokens per second: `per_event` tokens an event,
    `per_write` events a write); `server_info`: what it answers at /v1/benchrig/server, as
    benchrig serve does (None: no such route)."""
    cfg = {"delay_s": delay_s, "rate": rate, "tokens": tokens, "thinking": 0,
           "per_event": per_event, "per_write": per_write, "num_ctx": 4096,
           **({"server_info": server_info} if server_info is not None else {})}
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / "paced_server.py"),
                             str(port), json.dumps(cfg)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(10)
