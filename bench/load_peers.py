"""BenchRig's load client beside AIPerf and GuideLLM on the paced stand-in.

    make bench-load-peers        # each peer in a venv of its own (.bench-venvs/)
    python bench/load_peers.py [--streams 1,8] [--requests 32] [--venvs .bench-venvs] \
        [--tokenizer .bench-venvs/smollm2-tokenizer]

Same server, same output length, run one after the other at each concurrency; each tool's
TTFT and ITL percentiles beside the stand-in's truth (its `/truth` per request, as
bench/load_fidelity.py reads it, for BenchRig; the stand-in's schedule for the peers,
which cannot name each request's model), and each tool's CPU time per request.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchrig.load.distributions import percentile  # noqa: E402
from benchrig.load.engine import Level, Workload, run_level  # noqa: E402
from benchrig.load.figures import level_figures  # noqa: E402
from benchrig.load.measure import measured  # noqa: E402
from benchrig.load.wire import Endpoint  # noqa: E402
from benchrig.local.embedded_server import free_port  # noqa: E402


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def find(data: Any, name: str) -> dict[str, Any] | None:
    """The first mapping under key `name` anywhere in `data` (export layouts differ by
    version)."""
    if isinstance(data, dict):
        if isinstance(data.get(name), dict):
            found: dict[str, Any] = data[name]
            return found
        for value in data.values():
            if (hit := find(value, name)) is not None:
                return hit
    elif isinstance(data, list):
        for value in data:
            if (hit := find(value, name)) is not None:
                return hit
    return None


def aiperf(venvs: Path, port: int, streams: int, requests: int, tokens: int,
           tokenizer: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="aiperf-") as folder:
        return _aiperf(venvs, port, streams, requests, tokens, tokenizer, Path(folder))


def _aiperf(venvs: Path, port: int, streams: int, requests: int, tokens: int,
            tokenizer: str, out: Path) -> dict[str, Any]:
    command = [str(venvs / "aiperf" / "bin" / "aiperf"), "profile", "--model", "m",
               "--url", f"http://127.0.0.1:{port}", "--endpoint-type", "chat", "--streaming",
               "--concurrency", str(streams), "--request-count", str(requests),
               "--tokenizer", tokenizer, "--synthetic-input-tokens-mean", "32",
               "--output-tokens-mean", str(tokens), "--artifact-dir", str(out),
               "--ui-type", "none", "--use-server-token-count"]
    # server token counts: the stand-in's " t12" is one token by its count, several by any
    # real tokenizer (AIPerf re-tokenizing it read 182 tokens for 64, ITL 3.5 ms for 10)
    cpu, began = children_cpu(), time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    cpu, wall = children_cpu() - cpu, time.perf_counter() - began
    exports = sorted(out.rglob("profile_export_aiperf.json"))
    if done.returncode != 0 or not exports:
        return {"tool": "aiperf", "error": (done.stderr or done.stdout)[-400:]}
    data = json.loads(exports[0].read_text())
    ttft, itl = find(data, "time_to_first_token"), find(data, "inter_token_latency")
    return {"tool": "aiperf", "streams": streams, "requests": requests,
            "ttft_p50": (ttft or {}).get("p50"), "ttft_p99": (ttft or {}).get("p99"),
            "itl_p50": (itl or {}).get("p50"), "itl_p99": (itl or {}).get("p99"),
            "output_tokens": (find(data, "output_token_count") or {}).get("avg"),
            "cpu_ms_per_request": cpu * 1000 / requests, "wall_s": wall}


def guidellm(venvs: Path, port: int, streams: int, requests: int, tokens: int,
             tokenizer: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="guidellm-") as folder:
        return _guidellm(venvs, port, streams, requests, tokens, tokenizer, Path(folder))


def _stat(data: dict[str, Any], name: str, q: str) -> float | None:
    """GuideLLM's successful requests' percentile `q` (p50, p99) of metric `name`."""
    found = (((data.get("metrics") or {}).get(name) or {}).get("successful") or {})
    value = (found.get("percentiles") or {}).get(q)
    return value if isinstance(value, int | float) else None


def _guidellm(venvs: Path, port: int, streams: int, requests: int, tokens: int,
              tokenizer: str, out: Path) -> dict[str, Any]:
    # a tokenizer folder, never a hub name: offline, and the same vocabulary as AIPerf's
    folder = tokenizer if Path(tokenizer).is_dir() else str(venvs / "smollm2-tokenizer")
    command = [str(venvs / "guidellm" / "bin" / "guidellm"), "run",
               "--backend", f"kind=openai_http,target=http://127.0.0.1:{port},model=m",
               "--tokenizer", f"kind=hf_auto,model={folder}",
               "--profile", f"kind=concurrent,streams={streams}",
               "--constraint", f"kind=max_requests,count={requests}",
               "--data", f"kind=synthetic_text,prompt_tokens=32,output_tokens={tokens}",
               "--disable-progress", "--output", f"kind=json,path={out / 'out.json'}"]
    cpu, began = children_cpu(), time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    cpu, wall = children_cpu() - cpu, time.perf_counter() - began
    if done.returncode != 0 or not (out / "out.json").exists():
        return {"tool": "guidellm", "error": (done.stderr or done.stdout)[-400:]}
    data = json.loads((out / "out.json").read_text())["benchmarks"][0]
    # GuideLLM's inter_token_latency_ms is each request's mean gap after the first token,
    # counted once per token: the per-request mean's percentiles, weighted by tokens
    return {"tool": "guidellm", "streams": streams, "requests": requests,
            "ttft_p50": _stat(data, "time_to_first_token_ms", "p50"),
            "ttft_p99": _stat(data, "time_to_first_token_ms", "p99"),
            "itl_p50": _stat(data, "inter_token_latency_ms", "p50"),
            "itl_p99": _stat(data, "inter_token_latency_ms", "p99"),
            "output_tokens": _stat(data, "output_token_count", "p50"),
            "cpu_ms_per_request": cpu * 1000 / requests, "wall_s": wall}


def benchrig(port: int, streams: int, requests: int, tokens: int) -> dict[str, Any]:
    work = Workload(Endpoint.of(f"http://127.0.0.1:{port}/v1"), "m", ("hi " * 32,), tokens,
                    120.0)
    cpu, began = time.process_time(), time.perf_counter()
    run = run_level(work, Level(concurrency=streams, requests=requests))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - began
    figures = level_figures(run, {})
    # AIPerf's ITL is each request's mean, (E2E − TTFT) ÷ (tokens − 1): its percentiles
    # are over requests; BenchRig's itl_ms is over every token's gap, so both are shown
    means = [m for r in run.records if r.ok
             and (m := measured(r).itl_mean_ms) is not None]
    return {"tool": "benchrig", "streams": streams, "requests": requests,
            "ttft_p50": figures["ttft_ms"]["p50"], "ttft_p99": figures["ttft_ms"]["p99"],
            "itl_p50": figures["itl_ms"]["p50"], "itl_p99": figures["itl_ms"]["p99"],
            "itl_request_mean_p50": percentile(means, 50),
            "itl_request_mean_p99": percentile(means, 99),
            "output_tokens": figures["output_tokens"] / max(1, figures["completed"]),
            "cpu_ms_per_request": cpu * 1000 / requests, "wall_s": wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--streams", default="1,8")
    parser.add_argument("--requests", type=int, default=32)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--venvs", type=Path, default=ROOT / ".bench-venvs")
    parser.add_argument("--tokenizer", default="builtin",
                        help="AIPerf's: builtin (tiktoken, downloads its data once) or a local "
                             "Hugging Face tokenizer folder (offline)")
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
            rows.append(benchrig(port, streams, args.requests, args.tokens))
            if (args.venvs / "aiperf" / "bin" / "aiperf").exists():
                rows.append(aiperf(args.venvs, port, streams, args.requests, args.tokens,
                                   args.tokenizer))
            if (args.venvs / "guidellm" / "bin" / "guidellm").exists():
                rows.append(guidellm(args.venvs, port, streams, args.requests, args.tokens,
                                     args.tokenizer))
    finally:
        server.terminate()
        server.wait(10)
    print(f"truth: TTFT ≥ {args.delay * 1000:.0f} ms (the stand-in's delay), ITL "
          f"{1000 / args.rate:.1f} ms")
    for row in rows:
        print(json.dumps(row))


if __name__ == "__main__":
    main()
