"""The gateway's overhead per call: the same streamed chat call sent straight to a paced
upstream and through `benchrig serve --upstream` (its own process), interleaved, N pairs.

    .venv/bin/python bench/gateway.py [N]

Prints the median and p90 of (through the gateway − direct) for the time to the first
content chunk and to the end of the stream; the target is ≤ 2 ms median.
"""

from __future__ import annotations

import json
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
BODY = {"model": "m", "stream": True, "stream_options": {"include_usage": True},
        "messages": [{"role": "user", "content": "hi"}]}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def one_call(http: httpx.Client, base: str) -> tuple[float, float]:
    """(seconds to the first content chunk, seconds to the end) of one streamed call."""
    began = time.perf_counter()
    first = None
    with http.stream("POST", f"{base}/chat/completions", json=BODY) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if first is None and '"content":"' in line.replace(" ", ""):
                first = time.perf_counter()
    end = time.perf_counter()
    return (first or end) - began, end - began


def main(n: int) -> None:
    port = free_port()
    cfg = {"delay_s": 0.02, "rate": 20000, "tokens": 64, "thinking": 0, "per_event": 1,
           "per_write": 4, "num_ctx": 4096}
    upstream = subprocess.Popen([sys.executable, str(ROOT / "bench" / "paced_server.py"),
                                 str(port), json.dumps(cfg)], stdout=subprocess.PIPE, text=True)
    gateway = subprocess.Popen([sys.executable, "-m", "benchrig.cli", "serve", "--upstream",
                                f"http://127.0.0.1:{port}/v1"], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert upstream.stdout is not None and upstream.stdout.readline().strip() == "ready"
        assert gateway.stdout is not None
        through = gateway.stdout.readline().strip()
        direct = f"http://127.0.0.1:{port}/v1"
        ttft: list[float] = []
        total: list[float] = []
        with httpx.Client(trust_env=False, timeout=30) as http:
            for _ in range(5):  # warm both paths' connections
                one_call(http, direct)
                one_call(http, through)
            for i in range(n):
                # interleaved, the order alternating, so drift hits both sides alike
                order = (direct, through) if i % 2 == 0 else (through, direct)
                got = {base: one_call(http, base) for base in order}
                ttft.append((got[through][0] - got[direct][0]) * 1000)
                total.append((got[through][1] - got[direct][1]) * 1000)
        for name, values in (("to first token", ttft), ("to end of stream", total)):
            q = statistics.quantiles(values, n=10)
            print(f"gateway overhead {name}: median {statistics.median(values):.2f} ms, "
                  f"p90 {q[-1]:.2f} ms over {n} interleaved pairs "
                  f"(upstream: 20 ms to the first token, 64 tokens)")
    finally:
        for proc in (gateway, upstream):
            proc.terminate()
            proc.wait(10)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
