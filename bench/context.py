"""The context suite's own cost per step, beside the engine's: building the needle prompt to its
token target (the embedded model's tokenizer over the whole prompt, or the estimate), sampling
memory, and assembling the step's record.

    .venv/bin/python bench/context.py [--repeats 20] [--threads 1]

Prints a Markdown table of medians and ranges (ms); figures are quoted in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchrig.core.settings import Settings  # noqa: E402
from benchrig.drivers.base import DriverRequest  # noqa: E402
from benchrig.drivers.llamacpp import LlamaCppDriver, _load  # noqa: E402
from benchrig.haystack import Scenario, build_prompt, estimate_counter  # noqa: E402
from benchrig.local.memory import kv_cache_bytes, rss_bytes, trained_context  # noqa: E402
from benchrig.local.model import resolve_model  # noqa: E402
from benchrig.spec import load_task  # noqa: E402
from benchrig.suites.windows import memory_of, spill_point  # noqa: E402

WINDOWS = (512, 1024, 2048, 4096, 8192)


Timing = tuple[list[float], list[float]]


def timed(action: Callable[[], Any], repeats: int) -> Timing:
    """(wall ms, CPU ms) of each call: on a shared machine the wall time waits for a core,
    the CPU time is what BenchRig itself spends."""
    action()  # warm: the first call imports and fills caches
    wall, cpu = [], []
    for _ in range(repeats):
        began, began_cpu = time.perf_counter(), time.process_time()
        action()
        wall.append((time.perf_counter() - began) * 1000)
        cpu.append((time.process_time() - began_cpu) * 1000)
    return wall, cpu


def row(name: str, timing: Timing) -> str:
    wall, cpu = timing
    return (f"| {name} | {statistics.median(wall):.2f} ({min(wall):.2f}–{max(wall):.2f}) | "
            f"{statistics.median(cpu):.2f} |")


def sample_memory(llm: Any) -> tuple[Any, ...]:
    """What a step samples besides the engine: the resident set twice, the KV size."""
    return rss_bytes(), rss_bytes(), kv_cache_bytes(llm), trained_context(llm)


def record_memory(engine: dict[str, Any]) -> tuple[int | None, str]:
    return spill_point([{"window": 8192, "memory": memory_of(engine)}])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    task = load_task(ROOT / "tasks" / "context-needle.md")
    scenario = Scenario.of(task.frontmatter, task.body)
    driver = LlamaCppDriver()
    lines = ["| step 8192 unless named | wall ms, median (range) | CPU ms, median |",
             "|---|---|---|"]
    for window in WINDOWS:
        settings = Settings(context_size=window, threads=args.threads, timeout_s=600)
        request = DriverRequest(task.view(), (), "smollm2", None, settings)
        counter = driver.token_counter(request)  # loads the model at the window (untimed)
        prompt = build_prompt(scenario, window, 123456, counter)
        name = f"prompt to {prompt.counted_tokens} tokens ({prompt.counts} counts)"
        if window == 8192:
            lines.append(row(f"{name}, tokenizer", timed(
                partial(build_prompt, scenario, window, 123456, counter), args.repeats)))
            llm, _ = _load(resolve_model("smollm2"), window, args.threads)
            engine = {"memory": {"rss_before_bytes": rss_bytes(), "rss_after_bytes": rss_bytes(),
                                 "kv_cache_bytes": kv_cache_bytes(llm), "placement": "cpu"}}
            lines.append(row("memory: RSS before and after, KV size, trained context", timed(
                partial(sample_memory, llm), args.repeats)))
            lines.append(row("record: memory figures and the spill point", timed(
                partial(record_memory, engine), args.repeats)))
            lines.append(row("counter: the driver's tokenizer, model already loaded", timed(
                partial(driver.token_counter, request), args.repeats)))
            lines.append(row("prompt, estimate (4 characters per token)", timed(
                partial(build_prompt, scenario, window, 123456, estimate_counter()),
                args.repeats)))
        else:
            lines.append(row(f"window {window}: {name}, tokenizer", timed(
                partial(build_prompt, scenario, window, 123456, counter), args.repeats)))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
