"""HTTP runtime benchmarks: measurement error against a paced server, parsing capacity, and
BenchRig versus llama.cpp's own counters on the real engine (in process and over HTTP).

    .venv/bin/python bench/http_drivers.py [--streams 1 32] [--tokens 2000] [--generations 5]

Prints Markdown tables of medians; figures are quoted in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from benchrig.core.settings import Settings  # noqa: E402
from benchrig.core.transcript import DriverOutput  # noqa: E402
from benchrig.drivers import get_driver  # noqa: E402
from benchrig.drivers.base import DriverRequest  # noqa: E402
from benchrig.drivers.ollama import ChatLines  # noqa: E402
from benchrig.drivers.openai import _Stream  # noqa: E402
from benchrig.local.embedded_server import EmbeddedServer, ServerConfig, free_port  # noqa: E402
from benchrig.metrics import StreamCollector  # noqa: E402
from benchrig.prompt import render  # noqa: E402
from benchrig.spec import load_task  # noqa: E402
from benchrig.streams import NDJSONDecoder, SSEDecoder  # noqa: E402

TASK = load_task(ROOT / "tasks" / "lru-cache.md")
SHAPES = {"openai": ("openai", "/v1", False), "openai-inline": ("openai", "/v1", True),
          "ollama": ("ollama", "", False)}
med = statistics.median


class Paced:
    """bench/paced_server.py in its own process (its own interpreter and GIL)."""

    def __init__(self, cfg: dict[str, Any]) -> None:
        self.port = free_port()
        self.proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / "paced_server.py"),
                                      str(self.port), json.dumps(cfg)], stdout=subprocess.PIPE,
                                     text=True)
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "ready"
        self.url = f"http://127.0.0.1:{self.port}"

    def truth(self) -> dict[str, dict[str, float]]:
        data: dict[str, dict[str, float]] = httpx.get(f"{self.url}/truth", timeout=10).json()
        return data

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def expected_text(cfg: dict[str, Any]) -> tuple[str, str]:
    thinking = "".join(f" t{i}" for i in range(cfg["thinking"]))
    return thinking, "".join(f" t{i}" for i in range(cfg["thinking"], cfg["tokens"]))


def fidelity(shape: str, streams: int, rounds: int, cfg: dict[str, Any]) -> dict[str, Any]:
    """`rounds` × `streams` concurrent attempts through the real driver, paced server."""
    driver_name, suffix, inline = SHAPES[shape]
    cfg = {**cfg, "inline_think": inline}
    server = Paced(cfg)
    driver = get_driver(driver_name)
    settings = Settings(max_tokens=cfg["tokens"], context_size=cfg["num_ctx"], timeout_s=300)

    def one(name: str) -> DriverOutput:
        return driver.run(DriverRequest(TASK.view(), render(TASK), name, server.url + suffix,
                                        settings))

    names = [[f"paced-{r}-{i}" for i in range(streams)] for r in range(rounds)]
    try:
        with ThreadPoolExecutor(streams) as pool:
            outs = [out for group in names for out in pool.map(one, group)]
        truth = server.truth()
    finally:
        server.close()
    thinking, answer = expected_text(cfg)
    rows = []
    for name, out in zip([n for group in names for n in group], outs, strict=True):
        m, t = out.metrics, truth[name]
        assert m.ttft_ms is not None and m.tokens_per_s is not None
        sent_span = t["last_write"] - t["first_write"]
        rows.append({
            "ttft_err_ms": m.ttft_ms - cfg["delay_s"] * 1000,
            "ttft_vs_sent_ms": m.ttft_ms - (t["first_write"] - t["arrived"]) * 1000,
            "rate_err": m.tokens_per_s / cfg["rate"] - 1,
            "rate_vs_sent": m.tokens_per_s / (cfg["tokens"] / sent_span) - 1,
            "tokens_exact": m.output_tokens == cfg["tokens"],
            "split_exact": (out.transcript.thinking == thinking
                            and out.transcript.answer == answer
                            and m.thinking_chars == len(thinking)),
        })
    return {
        "shape": shape, "streams": streams,
        "ttft_err_ms": med(r["ttft_err_ms"] for r in rows),
        "ttft_err_max_ms": max(abs(r["ttft_err_ms"]) for r in rows),
        "ttft_vs_sent_ms": med(r["ttft_vs_sent_ms"] for r in rows),
        "rate_err": med(r["rate_err"] for r in rows),
        "rate_err_max": max(abs(r["rate_err"]) for r in rows),
        "rate_vs_sent": med(r["rate_vs_sent"] for r in rows),
        "tokens_exact": sum(r["tokens_exact"] for r in rows),
        "split_exact": sum(r["split_exact"] for r in rows), "n": len(rows),
    }


def plain_client(streams: int, rounds: int, cfg: dict[str, Any]) -> dict[str, float]:
    """The same paced SSE streams read by a bare socket client (no HTTP library, no parsing):
    what this machine's scheduling alone costs at this concurrency."""
    server = Paced(cfg)

    def one(name: str) -> tuple[float, float, float]:
        body = json.dumps({"model": name, "messages": []}).encode()
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            sent = time.perf_counter()
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                         b"Content-Length: %d\r\n\r\n" % len(body) + body)
            first, last, seen = 0.0, 0.0, b""
            while data := sock.recv(65536):
                now = time.perf_counter()
                seen += data if not first else b""
                if not first and b"data:" in seen:
                    first = now
                last = now
        return sent, first, last

    names = [[f"plain-{r}-{i}" for i in range(streams)] for r in range(rounds)]
    try:
        with ThreadPoolExecutor(streams) as pool:
            times = [x for group in names for x in pool.map(one, group)]
        truth = server.truth()
    finally:
        server.close()
    ttft, rate = [], []
    for name, (sent, first, last) in zip([n for g in names for n in g], times, strict=True):
        t = truth[name]
        ttft.append((first - sent) * 1000 - (t["first_write"] - t["arrived"]) * 1000)
        rate.append(cfg["tokens"] / (last - first) / (cfg["tokens"] / (t["last_write"]
                                                                       - t["first_write"])) - 1)
    return {"ttft_vs_sent_ms": med(ttft), "ttft_max_ms": max(ttft),
            "rate_vs_sent": med(rate), "rate_max": max(abs(r) for r in rate)}


def sse_stream(events: int) -> bytes:
    """A stream shaped like llama-cpp-python's (one token per event), ending as OpenAI's does."""
    chunk = {"id": "chatcmpl-acc21151-78cd-496c-9ebb-ea8705dc456e", "model": "smollm2",
             "created": 1796058863, "object": "chat.completion.chunk",
             "choices": [{"index": 0, "delta": {"content": " tok"}, "logprobs": None,
                          "finish_reason": None}]}
    one = b"data: " + json.dumps(chunk).encode() + b"\n\n"
    return one * events + b"data: [DONE]\n\n"


def ndjson_stream(events: int) -> bytes:
    line = {"model": "qwen3", "created_at": "2026-11-30T10:00:00.123456789Z",
            "message": {"role": "assistant", "content": " tok"}, "done": False}
    done = {**line, "message": {"role": "assistant", "content": ""}, "done": True,
            "done_reason": "stop", "eval_count": events}
    return (json.dumps(line).encode() + b"\n") * events + json.dumps(done).encode() + b"\n"


def capacity(events: int, read_size: int) -> dict[str, float]:
    """Events per second through the drivers' own per-event path (decoder, JSON, collector),
    in memory on one core: what BenchRig can take before it becomes the bottleneck."""
    found = {}
    for name, data in (("sse", sse_stream(events)), ("ndjson", ndjson_stream(events))):
        reads = [data[i:i + read_size] for i in range(0, len(data), read_size)]
        best = float("inf")
        for _ in range(3):
            began = time.process_time()
            collector = StreamCollector(time.perf_counter())
            if name == "sse":
                state, sse = _Stream(collector), SSEDecoder()
                for piece in reads:
                    now = time.perf_counter()
                    for event in sse.feed(piece):
                        state.event(event.data, now, "bench")
            else:
                lines, nd = ChatLines(collector, "bench"), NDJSONDecoder()
                for piece in reads:
                    now = time.perf_counter()
                    for raw in nd.feed(piece):
                        lines.line(raw, now)
            best = min(best, time.process_time() - began)
            assert collector.token_events == events
        found[name] = events / best
    return found


def end_to_end(events: int) -> float:
    """Events per second through the whole openai driver, from a server sending flat out."""
    cfg = {"delay_s": 0.0, "rate": 1e12, "tokens": events, "thinking": 0, "per_event": 1,
           "per_write": 64, "num_ctx": 4096}
    server = Paced(cfg)
    try:
        out = get_driver("openai").run(DriverRequest(
            TASK.view(), render(TASK), "flat-out", f"{server.url}/v1",
            Settings(max_tokens=events, timeout_s=300)))
    finally:
        server.close()
    m = out.metrics
    # flat out from loopback is faster than any real model: beyond the decode ceiling the
    # count is rejected as implausible (docs/metrics.md#plausibility-bounds); the events the
    # server sent are still what was parsed
    assert m.output_tokens == events or "output_tokens" in m.rejected, m.rejected
    assert m.wall_s and m.ttft_ms is not None
    return events / (m.wall_s - m.ttft_ms / 1000)


def real_engine(generations: int, max_tokens: int) -> dict[str, list[tuple[float, float]]]:
    """(BenchRig, llama.cpp) pairs for decode tokens/s and TTFT vs prompt time, same model,
    in process (llamacpp driver) and over HTTP (openai driver → benchrig serve)."""
    pairs: dict[str, list[tuple[float, float]]] = {
        "inproc_rate": [], "inproc_ttft": [], "http_rate": [], "http_ttft": []}
    local = get_driver("llamacpp")
    for seed in range(generations):
        s = Settings(temperature=0.7, max_tokens=max_tokens, seed=seed, timeout_s=300)
        m = local.run(DriverRequest(TASK.view(), render(TASK), "smollm2", None, s)).metrics
        assert m.tokens_per_s and m.ttft_ms
        pairs["inproc_rate"].append((m.tokens_per_s, m.engine["predicted_per_second"]))
        pairs["inproc_ttft"].append((m.ttft_ms, m.engine["prompt_ms"]))
    remote = get_driver("openai")
    with EmbeddedServer(ServerConfig(context_size=4096)) as server:
        for seed in range(generations):
            s = Settings(temperature=0.7, max_tokens=max_tokens, seed=seed, timeout_s=300)
            m = remote.run(DriverRequest(TASK.view(), render(TASK), "smollm2", server.base_url,
                                         s)).metrics
            perf = m.engine["server_perf"]
            assert m.tokens_per_s and m.ttft_ms
            pairs["http_rate"].append((m.tokens_per_s, perf["predicted_per_second"]))
            pairs["http_ttft"].append((m.ttft_ms, perf["prompt_ms"]))
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, nargs="+", default=[1, 32])
    parser.add_argument("--tokens", type=int, default=1000)
    parser.add_argument("--rounds", type=int, nargs="+", default=[10, 3],
                        help="rounds of each --streams value (samples = rounds × streams)")
    parser.add_argument("--rate", type=float, default=400.0)
    parser.add_argument("--delay-ms", type=float, default=50.0)
    parser.add_argument("--generations", type=int, default=5)
    parser.add_argument("--engine-tokens", type=int, default=256)
    parser.add_argument("--skip-engine", action="store_true")
    args = parser.parse_args()
    cfg = {"delay_s": args.delay_ms / 1000, "rate": args.rate, "tokens": args.tokens,
           "thinking": args.tokens // 5, "per_event": 3, "per_write": 2, "num_ctx": 4096}
    print(f"Paced server: first byte after {args.delay_ms:g} ms, {args.tokens} tokens at "
          f"{args.rate:g} tokens/s, {cfg['thinking']} of them thinking, {cfg['per_event']} "
          f"tokens per event, {cfg['per_write']} events per write; medians over rounds × "
          "streams attempts.\n")
    print("| shape | streams | TTFT − delay (median / max abs) | TTFT − server's actual delay "
          "| decode rate ÷ rate sent − 1 (median / max abs) | ÷ rate actually sent − 1 "
          "| tokens exact | split exact |")
    print("|---|---|---|---|---|---|---|---|")
    for streams, rounds in zip(args.streams, args.rounds, strict=True):
        for shape in SHAPES:
            r = fidelity(shape, streams, rounds, cfg)
            print(f"| {shape} | {streams} | {r['ttft_err_ms']:+.2f} / {r['ttft_err_max_ms']:.2f}"
                  f" ms | {r['ttft_vs_sent_ms']:+.2f} ms | {r['rate_err'] * 100:+.3f}% / "
                  f"{r['rate_err_max'] * 100:.3f}% | {r['rate_vs_sent'] * 100:+.3f}% | "
                  f"{r['tokens_exact']}/{r['n']} | {r['split_exact']}/{r['n']} |")
        plain = plain_client(streams, rounds, cfg)
        print(f"| plain socket client (baseline) | {streams} | | {plain['ttft_vs_sent_ms']:+.2f}"
              f" ms (max {plain['ttft_max_ms']:.2f}) | | {plain['rate_vs_sent'] * 100:+.3f}% "
              f"(max abs {plain['rate_max'] * 100:.3f}%) | | |")
    cap = capacity(200_000, 4096)
    one = capacity(5_000, 1)  # one byte per read: the worst split there is
    flat = end_to_end(100_000)
    print("\n| stream parsing (one core) | events/s |\n|---|---|")
    print(f"| SSE, decoder + JSON + collector, 4 KiB reads | {cap['sse']:,.0f} |")
    print(f"| NDJSON, decoder + JSON + collector, 4 KiB reads | {cap['ndjson']:,.0f} |")
    print(f"| SSE, 1-byte reads | {one['sse']:,.0f} |")
    print(f"| NDJSON, 1-byte reads | {one['ndjson']:,.0f} |")
    print(f"| openai driver end to end over loopback (httpx included) | {flat:,.0f} |")
    if args.skip_engine:
        return
    pairs = real_engine(args.generations, args.engine_tokens)
    print("\n| real engine (SmolLM2-135M) | BenchRig | llama.cpp's counters | ratio | n |\n"
          "|---|---|---|---|---|")
    for key, label, unit in (("inproc_rate", "decode tokens/s, in process", ""),
                             ("http_rate", "decode tokens/s, through benchrig serve", ""),
                             ("inproc_ttft", "TTFT vs prompt eval, in process", " ms"),
                             ("http_ttft", "TTFT vs prompt eval, through benchrig serve",
                              " ms")):
        ours, theirs = [p[0] for p in pairs[key]], [p[1] for p in pairs[key]]
        ratios = [a / b for a, b in pairs[key]]
        print(f"| {label} | {med(ours):.1f}{unit} | {med(theirs):.1f}{unit} | "
              f"{med(ratios):.3f} ({min(ratios):.3f}–{max(ratios):.3f}) | {len(ratios)} |")


if __name__ == "__main__":
    main()
