"""The samples of one dataset task are separate attempts: --retry-errors and run order see
each sample, never one task whose results are all the samples'."""

from __future__ import annotations

from typing import Any

from benchrig.attempts import by_attempt, errored, unit


def _result(sample: str, verdict: str, started: str) -> dict[str, Any]:
    return {"task": "capitals", "sample_id": sample, "model": "m", "agent": "replay",
            "provider": "p", "run_index": 0, "started_at": started, "run_id": sample + started,
            "result": verdict}


def test_an_errored_sample_is_retried_alone() -> None:
    results = [_result("fr", "error", "2026-12-01T10:00:00Z"),
               _result("pl", "pass", "2026-12-01T10:00:01Z")]
    assert errored(results, {"capitals"}, {"m"}, "replay", "p") == [("capitals#fr", "m", 0)]


def test_each_sample_is_its_own_attempt() -> None:
    results = [_result("fr", "pass", "2026-12-01T10:00:00Z"),
               _result("pl", "fail", "2026-12-01T10:00:01Z")]
    assert sorted(key[0] for key in by_attempt(results)) == ["capitals#fr", "capitals#pl"]
    assert unit({"task": "t"}) == "t"  # a one-file task's result: its task
