"""A load task and the command line → prompts and levels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchrig.core.errors import UsageError
from benchrig.load.sweep_plan import Given, levels, prompts, synthetic
from benchrig.spec import load_task
from tests.conftest import TASKS


def task(tmp_path: Path, load: dict[str, Any]) -> Any:
    import yaml

    meta = {"id": "lt", "suite": "load", "language": "en", "difficulty": "easy",
            "tags": ["load"], "timeout_s": 30, "max_tokens": 8, "load": load}
    path = tmp_path / "lt.md"
    path.write_text(f"---\n{yaml.safe_dump(meta)}---\n\nSay hi.\n", encoding="utf-8")
    return load_task(path)


def test_the_bundled_load_task_loads() -> None:
    loaded = load_task(TASKS / "load-chat-short.md")
    made = prompts(loaded, seed=1)
    assert made.source == "synthetic" and len(made.texts) == 32
    assert [lv.concurrency for lv in levels(loaded, Given())] == [1, 2, 4, 8]


def test_synthetic_prompts_are_seeded_and_about_their_length() -> None:
    one = synthetic(100, 10, 50, seed=3)
    assert one == synthetic(100, 10, 50, seed=3) != synthetic(100, 10, 50, seed=4)
    lengths = sorted(len(t.split()) for t in one)
    assert 90 <= lengths[len(lengths) // 2] <= 110
    assert {len(t.split()) for t in synthetic(7, 0, 5, seed=0)} == {7}


def test_fixed_prompts_and_the_body(tmp_path: Path) -> None:
    assert prompts(task(tmp_path, {"prompts": ["a", "b"]}), 0).texts == ("a", "b")
    assert prompts(task(tmp_path, {}), 0).texts == ("Say hi.",)


def test_the_command_line_wins_over_the_task(tmp_path: Path) -> None:
    spec = task(tmp_path, {"concurrency": [3], "requests": 5, "warmup": 1})
    assert [(lv.concurrency, lv.requests, lv.warmup) for lv in levels(spec, Given())] == \
        [(3, 5, 1)]
    found = levels(spec, Given(concurrency="1,2", requests=9, warmup=0))
    assert [(lv.concurrency, lv.requests, lv.warmup) for lv in found] == [(1, 9, 0),
                                                                         (2, 9, 0)]
    rated = levels(spec, Given(rate="0.5,2", arrivals="poisson", seed=4))
    assert [(lv.rate, lv.arrivals, lv.seed) for lv in rated] == [(0.5, "poisson", 4),
                                                                 (2.0, "poisson", 4)]
    assert [lv.concurrency for lv in levels(spec, Given(saturation=True,
                                                        concurrency="8"))] == [1, 2, 4, 8]


def test_a_malformed_load_block_is_refused(tmp_path: Path) -> None:
    from benchrig.core.errors import TaskError

    for bad in ({"concurrency": [0]}, {"rate": [-1]}, {"prompts": "web"},
                {"arrivals": "bursty"}, {"surprise": 1}):
        with pytest.raises(TaskError):
            task(tmp_path, bad)
    with pytest.raises(UsageError):
        levels(task(tmp_path, {}), Given(concurrency="1", rate="1"))


def test_a_load_block_the_schema_cannot_judge_is_refused_at_load(tmp_path: Path) -> None:
    """Each field valid, the whole ambiguous: concurrency and rate both (the rate silently
    won), arrivals without a rate, synthetic-only fields on fixed prompts (silently unused):
    the load suite's own rules refuse them when the task loads, naming the field."""
    from benchrig.core.errors import TaskError

    for bad, named in (({"concurrency": [1], "rate": [1.0]}, "one sweep"),
                       ({"concurrency": [1], "arrivals": "poisson"}, "load.arrivals"),
                       ({"prompts": ["hi"], "prompt_tokens": 64}, "load.prompt_tokens")):
        with pytest.raises(TaskError, match=named):
            task(tmp_path, bad)
