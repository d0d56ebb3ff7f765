"""Load-client fidelity: BenchRig's load client against the paced stand-in's known truth and
against a bare asyncio socket client (and httpx.AsyncClient), at 1, 8, 32 and 64 streams.

    python bench/load_fidelity.py [--streams 1,8,32,64] [--rounds 3] [--tokens 64] [--rate 100]

Each request asks for its own model name, so the stand-in's `/truth` says when that
request arrived and when its first and last bytes left (time.perf_counter: CLOCK_MONOTONIC,
the same clock in every process on Linux). A request's true TTFT is its first write less
the client's dispatch: what a client that read the socket the instant the byte left would
see. Clients run interleaved, level by level, against the same server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.request import urlopen

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchrig.load.distributions import percentile  # noqa: E402
from benchrig.load.engine import Level, Workload, run_level  # noqa: E402
from benchrig.load.measure import measured  # noqa: E402
from benchrig.load.wire import Endpoint, request_bytes  # noqa: E402
from benchrig.local.embedded_server import free_port  # noqa: E402


class Named(Workload):
    """A workload whose every request names its own model (the stand-in's truth key)."""

    def body(self, index: int) -> dict[str, Any]:
        return {**super().body(index), "model": f"{self.model}-{index}"}


@dataclass
class Timed:
    """One request as a client saw it: dispatch (perf_counter), TTFT and ITLs in ms."""

    model: str
    dispatched: float
    ttft_ms: float
    itl_ms: list[float]


async def bare(endpoint: Endpoint, body: dict[str, Any]) -> Timed:
    """The least a client can do: read the socket, time each read that holds text."""
    reader, writer = await asyncio.open_connection(endpoint.host, endpoint.port)
    dispatched = time.perf_counter()
    writer.write(request_bytes(endpoint, body, None))
    first, last, itl = None, None, []
    while data := await reader.read(65536):
        now = time.perf_counter()
        k = data.count(b'"content"')
        if not k:
            continue
        if first is None:
            first, k = now, k - 1
        elif last is not None:
            itl += [(now - last) * 1000 / k] * k
        last = now
    writer.close()
    assert first is not None
    return Timed(body["model"], dispatched, (first - dispatched) * 1000, itl)


async def with_httpx(client: Any, url: str, body: dict[str, Any]) -> Timed:
    """httpx.AsyncClient's streaming read, timed per text chunk of its byte iterator."""
    dispatched = time.perf_counter()
    first, last, itl = None, None, []
    async with client.stream("POST", url, json=body) as response:
        async for data in response.aiter_raw():
            now = time.perf_counter()
            k = data.count(b'"content"')
            if not k:
                continue
            if first is None:
                first, k = now, k - 1
            elif last is not None:
                itl += [(now - last) * 1000 / k] * k
            last = now
    assert first is not None
    return Timed(body["model"], dispatched, (first - dispatched) * 1000, itl)


async def closed_loop(streams: int, count: int, one: Callable[[int], Awaitable[Timed]]
                      ) -> list[Timed]:
    done: list[Timed] = []
    started = 0

    async def worker() -> None:
        nonlocal started
        while started < count:
            index = started
            started += 1
            done.append(await one(index))

    await asyncio.gather(*(worker() for _ in range(streams)))
    return done


def benchrig_client(work: Named, streams: int, count: int) -> list[Timed]:
    run = run_level(work, Level(concurrency=streams, requests=count))
    out = []
    for index, record in enumerate(run.records):
        m = measured(record)
        out.append(Timed(f"{work.model}-{index}", record.dispatched, m.ttft_ms, list(m.itl_ms)))
    return out


def bare_client(work: Named, streams: int, count: int) -> list[Timed]:
    return asyncio.run(closed_loop(streams, count,
                                   lambda i: bare(work.endpoint, work.body(i))))


def httpx_client(work: Named, streams: int, count: int) -> list[Timed]:
    import httpx

    async def run() -> list[Timed]:
        limits = httpx.Limits(max_connections=streams + 1)
        async with httpx.AsyncClient(limits=limits, timeout=60) as client:
            url = f"http://{work.endpoint.host}:{work.endpoint.port}{work.endpoint.path}"
            return await closed_loop(streams, count,
                                     lambda i: with_httpx(client, url, work.body(i)))
    return asyncio.run(run())


CLIENTS = {"benchrig": benchrig_client, "bare": bare_client, "httpx": httpx_client}


def truth(port: int) -> dict[str, dict[str, float]]:
    with urlopen(f"http://127.0.0.1:{port}/truth", timeout=30) as answer:
        found: dict[str, dict[str, float]] = json.loads(answer.read())
        return found


def row(name: str, streams: int, timed: list[Timed], known: dict[str, dict[str, float]],
        cpu_s: float, tokens: int) -> dict[str, Any]:
    true_ttft = [(known[t.model]["first_write"] - t.dispatched) * 1000 for t in timed]
    true_itl = [(known[t.model]["last_write"] - known[t.model]["first_write"]) * 1000
                / (tokens - 1) for t in timed]
    ttft = [t.ttft_ms for t in timed]
    itl = [x for t in timed for x in t.itl_ms]
    figures = {"client": name, "streams": streams, "requests": len(timed),
               "cpu_ms_per_request": cpu_s * 1000 / len(timed)}
    for q in (50, 99):
        figures[f"ttft_p{q}"] = percentile(ttft, q)
        figures[f"true_ttft_p{q}"] = percentile(true_ttft, q)
        figures[f"itl_p{q}"] = percentile(itl, q)
    figures["itl_mean"] = sum(itl) / len(itl)
    figures["true_itl_mean"] = sum(true_itl) / len(true_itl)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--streams", default="1,8,32,64")
    parser.add_argument("--rounds", type=int, default=3, help="requests per stream")
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--clients", default="benchrig,bare,httpx")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    cfg = {"delay_s": args.delay, "rate": args.rate, "tokens": args.tokens, "thinking": 0,
           "per_event": 1, "per_write": 1, "num_ctx": 4096}
    port = free_port()
    server = subprocess.Popen([sys.executable, str(ROOT / "bench" / "paced_server.py"),
                               str(port), json.dumps(cfg)], stdout=subprocess.PIPE, text=True)
    rows = []
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "ready"
        for streams in (int(s) for s in args.streams.split(",")):
            for name in args.clients.split(","):
                work = Named(Endpoint.of(f"http://127.0.0.1:{port}/v1"),
                             f"{name}{streams}", ("hi",), args.tokens, 120.0)
                cpu = time.process_time()
                timed = CLIENTS[name](work, streams, streams * args.rounds)
                cpu = time.process_time() - cpu
                rows.append(row(name, streams, timed, truth(port), cpu, args.tokens))
    finally:
        server.terminate()
        server.wait(10)
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print(f"paced stand-in: delay {args.delay * 1000:.0f} ms, {args.tokens} tokens at "
          f"{args.rate:g}/s (ITL {1000 / args.rate:.1f} ms), one token per write")
    print("streams client    TTFT p50 (truth, err)    TTFT p99 (truth, err)    "
          "ITL p50  ITL p99  ITL mean (truth)  CPU ms/req")
    for r in rows:
        print(f"{r['streams']:>7} {r['client']:<9}"
              f"{r['ttft_p50']:7.2f} ({r['true_ttft_p50']:6.2f}, "
              f"{r['ttft_p50'] - r['true_ttft_p50']:+5.2f})  "
              f"{r['ttft_p99']:7.2f} ({r['true_ttft_p99']:6.2f}, "
              f"{r['ttft_p99'] - r['true_ttft_p99']:+5.2f})  "
              f"{r['itl_p50']:7.2f}  {r['itl_p99']:7.2f}  {r['itl_mean']:6.2f} "
              f"({r['true_itl_mean']:6.2f})  {r['cpu_ms_per_request']:8.2f}")


if __name__ == "__main__":
    main()
