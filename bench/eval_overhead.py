"""A small eval end to end: 4 samples against `benchrig serve`, three ways, side by side.

    .venv/bin/python bench/eval_overhead.py [--inspect /work/bench-venvs/inspect/bin/inspect]
        [--max-tokens 96] [--repeats 3]

1. direct: a plain httpx loop in this process sends the 4 requests BenchRig would send
   (same messages, same body) to the server and reads each stream to its end;
2. benchrig: `benchrig run T1 T2 T3 T4 --driver openai --provider <server>` as a command
   (interpreter start, plan, 4 attempts with checks and result files, the table);
3. Inspect AI (installed from PyPI into its own venv, `--inspect`): `inspect eval` of a
   4-sample task with the same messages, `generate()` and a `match()` scorer, against the
   same server through its OpenAI-compatible provider, same max tokens, temperature, seed.

The server answers one request at a time, so concurrency cannot change the figures; each
way runs sequentially. Prints a Markdown table of medians; figures are quoted in
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from benchrig.drivers.openai import request_body  # noqa: E402
from benchrig.local.embedded_server import EmbeddedServer, ServerConfig  # noqa: E402
from benchrig.orchestrate.runner import Overrides, settings_for  # noqa: E402
from benchrig.prompt import render  # noqa: E402
from benchrig.spec import load_tasks, task_paths  # noqa: E402

TASKS = ("bat-and-ball", "discount-tax", "two-trains", "multiples-three-five")
INSPECT_TASK = '''
import json
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.scorer import match
from inspect_ai.solver import generate

@task
def four() -> Task:
    def message(m):
        kind = ChatMessageSystem if m["role"] == "system" else ChatMessageUser
        return kind(content=m["content"])
    prompts = json.load(open(PROMPTS))
    return Task(dataset=[Sample(input=[message(m) for m in p], target="x") for p in prompts],
                solver=generate(), scorer=match())
'''


def bodies(max_tokens: int, model: str) -> list[dict[str, Any]]:
    tasks = load_tasks(task_paths(list(TASKS)))
    return [request_body(model, [dict(m) for m in render(t, "chat")],
                         settings_for(t, Overrides(max_tokens=max_tokens), model=model))
            for t in tasks]


def direct(url: str, requests: list[dict[str, Any]]) -> tuple[float, list[int]]:
    """Seconds for the 4 streams in a plain loop; the chunks of text each streamed (one per
    token from llama-cpp-python's server, which sends no usage while streaming)."""
    tokens = []
    began = time.perf_counter()
    with httpx.Client(timeout=600) as client:
        for body in requests:
            chunks = 0
            with client.stream("POST", f"{url}/chat/completions", json=body) as reply:
                for line in reply.iter_lines():
                    if line.startswith("data: {"):
                        delta = json.loads(line[6:])["choices"][0].get("delta") or {}
                        chunks += bool(delta.get("content"))
            tokens.append(chunks)
    return time.perf_counter() - began, tokens


def benchrig(url: str, model: str, max_tokens: int) -> tuple[float, list[int]]:
    with tempfile.TemporaryDirectory() as folder:
        began = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "benchrig.cli", "run", *TASKS,
                               "--model", model, "--driver", "openai", "--provider", url,
                               "--max-tokens", str(max_tokens), "--results-dir", folder],
                              cwd=ROOT, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - began
        assert done.returncode in (0, 1), done.stderr[-2000:]
        found = {r["task"]: r for r in (json.loads(p.read_text())
                                        for p in Path(folder).glob("*.json"))}
    return wall, [found[t]["metrics"]["output_tokens"] for t in sorted(found, key=TASKS.index)]


def inspect(binary: str, url: str, model: str, requests: list[dict[str, Any]],
            max_tokens: int) -> float:
    with tempfile.TemporaryDirectory() as folder:
        prompts = Path(folder) / "prompts.json"
        prompts.write_text(json.dumps([b["messages"] for b in requests]))
        task = Path(folder) / "four.py"
        task.write_text(INSPECT_TASK.replace("PROMPTS", repr(str(prompts))))
        env = {**os.environ, "LOCAL_API_KEY": "none", "LOCAL_BASE_URL": url,
               "INSPECT_LOG_DIR": str(Path(folder) / "logs")}
        env.pop("PYTHONPATH", None)
        began = time.perf_counter()
        done = subprocess.run([binary, "eval", task.name, "--model",
                               f"openai-api/local/{model}", "--max-tokens", str(max_tokens),
                               "--temperature", "0", "--seed", "0", "--display", "none",
                               "--max-connections", "1"], cwd=folder, env=env,
                              capture_output=True, text=True, check=False)
        wall = time.perf_counter() - began
        assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inspect", default="/work/bench-venvs/inspect/bin/inspect")
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    med = statistics.median
    rows: dict[str, list[float]] = {"direct": [], "benchrig": [], "inspect": []}
    with EmbeddedServer(ServerConfig(context_size=4096)) as server:
        url, model = server.base_url, server.alias
        requests = bodies(args.max_tokens, model)
        direct(url, requests)  # warm the server's prompt path once
        for _ in range(args.repeats):
            seconds, sent = direct(url, requests)
            rows["direct"].append(seconds)
            seconds, ours = benchrig(url, model, args.max_tokens)
            rows["benchrig"].append(seconds)
            print(f"tokens: benchrig {ours}, direct (text chunks) {sent}", file=sys.stderr)
            if Path(args.inspect).exists():
                rows["inspect"].append(inspect(args.inspect, url, model, requests,
                                               args.max_tokens))
    base = med(rows["direct"])
    print(f"| 4 samples against `benchrig serve` (SmolLM2, {args.max_tokens} tokens max), "
          f"tokens per sample {sent} | median s | range | × direct |")
    print("|---|---|---|---|")
    for name, what in (("direct", "direct: plain httpx loop, in process"),
                       ("benchrig", "`benchrig run` (whole command: start-up, checks, "
                                    "result files, table)"),
                       ("inspect", "Inspect AI `inspect eval` (whole command, own venv)")):
        found = rows[name]
        if found:
            print(f"| {what} | {med(found):.2f} | {min(found):.2f}–{max(found):.2f} | "
                  f"{med(found) / base:.2f} |")


if __name__ == "__main__":
    main()
