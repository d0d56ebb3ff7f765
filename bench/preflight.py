"""What preflight adds to a run: each driver's probe against a loopback stand-in, per call.

    .venv/bin/python bench/preflight.py [--calls 50]

Times `preflight(model, url)` of the ollama driver (GET /api/tags) and the openai driver
(GET /v1/models) against the stand-ins of tests/helpers, first call (imports, the HTTP
client's set-up) and the median of the rest; and the refusal of a dead port. The target
(issue 24) is under 200 ms per preflight.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchrig.core.errors import UsageError
from benchrig.drivers import get_driver
from tests.helpers.loopback import Loopback, Reply, Route
from tests.helpers.ollama import TAGS

MODELS = {"object": "list", "data": [{"id": "m", "object": "model"}]}


def timings(call: Callable[[], None], calls: int) -> tuple[float, float]:
    """(first call ms, median ms of the others)."""
    spent = []
    for _ in range(calls):
        start = time.perf_counter()
        call()
        spent.append((time.perf_counter() - start) * 1000)
    return spent[0], statistics.median(spent[1:])


def refused(url: str) -> None:
    try:
        get_driver("ollama").preflight("qwen3", url)
    except UsageError:
        return
    raise AssertionError("a dead port passed preflight")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=50)
    calls = parser.parse_args().calls
    routes: dict[tuple[str, str], Route] = {("GET", "/api/tags"): Reply.json(TAGS),
                                            ("GET", "/v1/models"): Reply.json(MODELS)}
    with Loopback(routes) as server:
        ollama = timings(lambda: get_driver("ollama").preflight("qwen3", server.url), calls)
        openai = timings(lambda: get_driver("openai").preflight("m", f"{server.url}/v1"),
                         calls)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    down = timings(lambda: refused(dead), calls)
    for name, (first, rest) in (("ollama /api/tags", ollama), ("openai /models", openai),
                                ("dead port, refused", down)):
        print(f"{name:20} first {first:7.1f} ms   median of {calls - 1}: {rest:6.1f} ms")


if __name__ == "__main__":
    main()
