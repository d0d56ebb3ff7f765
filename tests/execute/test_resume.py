"""--resume finds the attempts that already have a result; a killed run's leftovers go."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Any

import pytest

from benchrig.core.settings import Settings
from benchrig.execute import AttemptSpec
from benchrig.execute.folder import LOCK, held
from benchrig.execute.plan import attempt_specs
from benchrig.execute.resume import remaining
from benchrig.orchestrate.runner import recorded_settings
from benchrig.spec import load_tasks, task_paths
from tests.conftest import SOLUTIONS, answer_file, cli_call, fenced

TASK = load_tasks(task_paths(["bat-and-ball"]))[0]


def plan(runs: int, label: str | None = None, temperature: float = 0.0) -> list[AttemptSpec]:
    return attempt_specs(((TASK, "m", run) for run in range(runs)), "openai", "openai", "u",
                         lambda task, model, run: Settings(temperature=temperature, seed=run),
                         Path("r"), label=label)


def result_of(spec: AttemptSpec, outcome: str, at: str = "2026-01-01T00:00:00Z"
              ) -> dict[str, Any]:
    return {"task_hash": spec.task.task_hash, "model": spec.model, "driver": spec.driver,
            "provider": spec.provider, "settings": recorded_settings(spec.settings, None),
            "run_index": spec.run_index, "label": spec.label, "result": outcome,
            "started_at": at}


def test_only_attempts_without_a_result_remain_and_each_keeps_its_run() -> None:
    done = [result_of(s, "fail") for s in plan(2)]
    left = remaining(plan(5), done)
    assert [s.run_index for s in left] == [2, 3, 4]
    assert [s.index for s in left] == [0, 1, 2]


def test_another_label_or_setting_or_edited_task_is_another_experiment() -> None:
    done = [result_of(s, "pass") for s in plan(2)]
    assert len(remaining(plan(2, label="b"), done)) == 2
    assert len(remaining(plan(2, temperature=0.5), done)) == 2
    edited = [{**r, "task_hash": "sha256:other"} for r in done]
    assert len(remaining(plan(2), edited)) == 2


def test_retry_errors_with_resume_runs_the_missing_and_the_errored() -> None:
    specs = plan(4)
    done = [result_of(specs[0], "error"), result_of(specs[1], "error"),
            result_of(specs[1], "pass", at="2026-01-02T00:00:00Z"),
            result_of(specs[2], "fail")]
    assert [s.run_index for s in remaining(specs, done)] == [3]
    assert [s.run_index for s in remaining(specs, done, retry_errors=True)] == [0, 3]


def test_a_result_from_before_run_indexes_is_never_taken_for_one() -> None:
    old = {k: v for k, v in result_of(plan(1)[0], "pass").items() if k != "run_index"}
    assert len(remaining(plan(1), [old])) == 1


def leftovers(folder: Path) -> list[Path]:
    made = [folder / ".2026-a.json.x1y2.tmp", folder / ".2026-b.transcript.jsonl.z9.tmp",
            folder / "2026-c.transcript.jsonl"]
    for path in made:
        path.write_text("half")
    (folder / "2026-d.json").write_text("{}")
    (folder / "2026-d.transcript.jsonl").write_text("{}")
    return made


def test_a_killed_runs_leftovers_are_removed_and_whole_attempts_kept(tmp_path: Path) -> None:
    made = leftovers(tmp_path)
    with held(tmp_path) as removed:
        assert sorted(removed) == sorted(made)
    assert sorted(p.name for p in tmp_path.iterdir()) == \
        sorted([LOCK, "2026-d.json", "2026-d.transcript.jsonl"])


def test_nothing_is_removed_while_another_run_writes_there(tmp_path: Path) -> None:
    made = leftovers(tmp_path)
    other = os.open(tmp_path / LOCK, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(other, fcntl.LOCK_SH)  # a run in another process holds the folder
        with held(tmp_path) as removed:
            assert removed == []
        assert all(path.exists() for path in made)
    finally:
        os.close(other)


def test_an_agent_on_the_embedded_model_gets_its_window_and_resumes_on_it() -> None:
    """Agents send 1–6k tokens of their own: on the embedded model the default window is
    widened to AGENT_CONTEXT; a window that was asked for is kept; a hosted agent or a raw
    runtime is untouched. The widened window is what resume compares against."""
    from benchrig.core.settings import AGENT_CONTEXT
    from benchrig.orchestrate.runner import Overrides, settings_for

    def specs(driver: str, provider: str | None, overrides: Overrides) -> list[AttemptSpec]:
        return attempt_specs([(TASK, "smollm2", 0)], driver, driver, provider,
                             lambda task, model, run: settings_for(task, overrides, model),
                             Path("r"))

    [local] = specs("qwen", "local", Overrides())
    default = settings_for(TASK, Overrides()).context_size
    assert local.settings.context_size == AGENT_CONTEXT > default
    assert "agent" in (local.settings.context_size_source or "")
    [asked] = specs("qwen", "local", Overrides(context_size=2048))
    assert asked.settings.context_size == 2048
    [hosted] = specs("qwen", "http://h/v1", Overrides())
    [raw] = specs("llamacpp", None, Overrides())
    assert hosted.settings.context_size == raw.settings.context_size == 4096
    assert remaining([local], [result_of(local, "fail")]) == []


@pytest.mark.parametrize("again", ["--resume", "--retry-errors"])
def test_a_run_with_nothing_left_to_run_boots_no_sandbox(
        tmp_path: Path, results_dir: Path, monkeypatch: pytest.MonkeyPatch, again: str) -> None:
    # A coding run whose every attempt already has its result (or none whose result is an
    # error) booted a spare sandbox (a bubblewrap and an interpreter) before the folder was
    # read, then stopped it unused.
    from benchrig.sandbox import confinement, pool

    if not confinement.detect().dedicated_uid:
        pytest.skip("spares need a dedicated uid")
    answer = answer_file(tmp_path, fenced((SOLUTIONS / "lru-cache.py").read_text()))
    args = ("run", "lru-cache", "-m", "m", "-d", "replay", "-p", str(answer),
            "--results-dir", str(results_dir))
    assert cli_call(*args, results_dir=results_dir).code == 0
    launched: list[Any] = []
    real = pool._launch

    def counted(*args: Any) -> Any:
        launched.append(args)
        return real(*args)

    closing = pool.SandboxPool.close

    def close(self: pool.SandboxPool) -> None:
        # A launch scheduled is let start before the pool closes, as it does in a run whose
        # folder takes longer to read than that (here a close could win the race and hide it).
        self._wait_launches()
        closing(self)

    monkeypatch.setattr(pool, "_launch", counted)
    monkeypatch.setattr(pool.SandboxPool, "close", close)
    ran = cli_call(*args, again, results_dir=results_dir)
    pool.in_background(lambda: None).wait()  # one launcher, in order: any launch is done
    assert ran.code == 0, ran.stderr
    assert ("1 of 1 attempts already have a result" if again == "--resume"
            else "nothing to retry") in ran.stderr
    assert launched == []
