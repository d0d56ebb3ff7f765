"""The embedded model, for real: SmolLM2-135M through llama-cpp-python, end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchrig.core.errors import UsageError
from benchrig.local.model import resolve_model
from benchrig.resultio.files import validate
from tests.conftest import ROOT, benchrig
from tests.helpers.agents import task_with_timeout

pytestmark = pytest.mark.model


def results_in(folder: Path) -> list[dict]:  # type: ignore[type-arg]
    found = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text())
        validate(data)
        found.append(data)
    return found


def test_headline_command_on_the_embedded_model(tmp_path: Path, results_dir: Path) -> None:
    # lru-cache with room (inside benchrig()'s 600 s): at its own 120 s, two test workers at
    # load ~16 ran it out (an error, 125 s)
    task = task_with_timeout(tmp_path, 500)
    ran = benchrig(str(task), "smollm2", "llamacpp", results_dir=results_dir,
                   command=[str(ROOT / "scripts" / "run.sh")])
    (result,) = results_in(results_dir)
    assert ran.code == (0 if result["result"] == "pass" else 1), ran.stderr
    assert result["result"] in ("pass", "fail")  # whichever the model earns, never error
    m = result["metrics"]
    assert m["ttft_ms"] > 0 and m["wall_s"] > 0 and m["tokens_per_s"] > 0
    assert m["wall_s"] * 1000 > m["ttft_ms"]
    assert m["output_tokens"] > 0 and m["input_tokens"] > 0
    assert m["output_tokens_source"] == "counted"
    assert (m["cost_usd"], m["cost_source"]) == (0.0, "local model (in process): no charge")
    # llama.cpp's own counters sit raw beside ours and agree on the token counts.
    engine = m["engine"]
    assert engine["source"] == "llama_perf_context"
    assert engine["prompt_n"] == m["input_tokens"]
    assert m["output_tokens"] - engine["predicted_n"] in (0, 1)
    assert result["checks"]["total"] == 2
    assert result["environment"]["runtime"]["name"] == "llama-cpp-python"
    assert result["settings"]["threads"] >= 1
    assert "generating" in ran.stderr  # progress goes to stderr…
    assert "generating" not in ran.stdout  # …and data to stdout


def test_gguf_path_and_short_budget_are_honoured(results_dir: Path) -> None:
    path = resolve_model("smollm2")
    ran = benchrig("run", "valid-brackets", "-m", str(path), "--max-tokens", "16",
                   results_dir=results_dir)
    (result,) = results_in(results_dir)
    assert ran.code in (0, 1)
    assert result["model"] == str(path)
    assert result["metrics"]["output_tokens"] <= 16
    assert result["settings"]["max_tokens"] == 16
    if result["finish_reason"] == "length" and result["code_source"] is None:
        assert result["truncated"] is True
        assert result["notes"] == ("Response truncated at num_predict=16 before the code "
                                   "was complete")


def test_a_budget_capped_by_the_context_is_recorded_and_named(results_dir: Path) -> None:
    # lru-cache's prompt is 238 tokens: a 256-token window leaves room for 18 of the 1024
    ran = benchrig("run", "lru-cache", "-m", "smollm2", "--context-size", "256",
                   "--threads", "1", results_dir=results_dir)
    (result,) = results_in(results_dir)
    assert ran.code == 1, ran.stderr
    room = 256 - result["metrics"]["input_tokens"]
    s = result["settings"]
    assert (s["max_tokens"], s["max_tokens_requested"], s["context_size"]) == (room, 1024, 256)
    assert s["context_size_source"] == "command line"
    assert result["metrics"]["output_tokens"] == room
    assert (result["finish_reason"], result["truncated"]) == ("length", True)
    assert result["notes"] == (f"Response truncated at num_predict={room} before the code "
                               "was complete")


def test_unknown_model_is_a_usage_error_naming_the_known_ones(results_dir: Path) -> None:
    ran = benchrig("run", "lru-cache", "-m", "gpt-17", results_dir=results_dir)
    assert ran.code == 2
    assert "unknown model 'gpt-17'" in ran.stderr and "smollm2" in ran.stderr
    assert list(results_dir.iterdir()) == []
    with pytest.raises(UsageError):
        resolve_model("missing.gguf")


def test_the_loaded_model_is_closed_before_the_interpreter_tears_down() -> None:
    """The model kept for the process's next attempt is closed at exit by its owner: left to
    the modules' teardown, llama-cpp-python's __del__ found its own functions gone and printed
    "Exception ignored in: <function Llama.__del__ ...> ... 'NoneType' object is not callable"
    (at a pytest worker's exit, after the tests that ran the driver in process)."""
    script = ("import atexit\n"
              "from tests.helpers.llamas import alive_llamas\n"
              # registered first, so it runs last: after every owner's own atexit
              "atexit.register(lambda: print('alive at exit:', alive_llamas()))\n"
              "from benchrig.drivers.llamacpp import _load\n"
              "from benchrig.local.model import resolve_model\n"
              "_load(resolve_model('smollm2'), 512, 1)\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "alive at exit: []" in done.stdout, done.stdout
    assert "Exception ignored" not in done.stderr, done.stderr
