"""The benchmark-runner scripts: run.sh and runner.py hand over to BenchRig, exit codes kept."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, SOLUTIONS, answer_file, benchrig, fenced

RUN = [str(ROOT / "scripts" / "run.sh")]


def test_run_sh_without_arguments_prints_usage_and_exits_2(results_dir: Path) -> None:
    ran = benchrig(results_dir=results_dir, command=RUN)
    assert ran.code == 2
    assert "usage: scripts/run.sh <task> <model> [agent] [provider]" in ran.stderr


@pytest.mark.slow
def test_run_sh_replay_pass_and_fail_exit_codes(tmp_path: Path, results_dir: Path) -> None:
    good = answer_file(tmp_path, fenced((SOLUTIONS / "valid-brackets.py").read_text()), "g.md")
    bad = answer_file(tmp_path, fenced("def is_valid(s):\n    return True\n"), "b.md")
    assert benchrig("valid-brackets", "oracle", "replay", str(good), results_dir=results_dir,
                    command=RUN).code == 0
    ran = benchrig("valid-brackets", "liar", "replay", str(bad), results_dir=results_dir,
                   command=RUN)
    assert ran.code == 1
    assert "fail (3/6 checks)" in ran.stdout
    assert len(list(results_dir.glob("*.json"))) == 2


def test_unknown_task_exits_2(results_dir: Path) -> None:
    ran = benchrig("no-such-task", "m", "replay", "x", results_dir=results_dir, command=RUN)
    assert ran.code == 2
    assert "no-such-task.md: file not found" in ran.stderr


def test_runner_py_flags(tmp_path: Path, results_dir: Path) -> None:
    good = answer_file(tmp_path, fenced((SOLUTIONS / "flatten-dict.py").read_text()))
    ran = benchrig("--task", "flatten-dict", "--model", "oracle", "--agent", "replay",
                   "--provider", str(good), results_dir=results_dir,
                   command=[sys.executable, str(ROOT / "scripts" / "runner.py")])
    assert ran.code == 0, ran.stderr
    assert "pass (4/4 checks)" in ran.stdout


@pytest.mark.slow
def test_summary_py_renders_markdown_and_csv(tmp_path: Path, results_dir: Path) -> None:
    good = answer_file(tmp_path, fenced((SOLUTIONS / "lru-cache.py").read_text()))
    benchrig("lru-cache", "oracle", "replay", str(good), results_dir=results_dir, command=RUN)
    summary = [sys.executable, str(ROOT / "scripts" / "summary.py")]
    md = benchrig("--format", "markdown", results_dir=results_dir, command=summary)
    assert md.code == 0 and "| oracle | replay | 1 | 100% (1/1) |" in md.stdout
    csv = benchrig("--format", "csv", results_dir=results_dir, command=summary)
    assert csv.stdout.splitlines()[0].startswith("model,agent,runs,passed")


def imported(stderr: str) -> set[str]:
    """The modules `python -X importtime` reported importing."""
    return {line.rsplit("|", 1)[1].strip() for line in stderr.splitlines()
            if line.startswith("import time:") and "|" in line}


def test_one_replay_attempt_imports_only_what_it_uses(tmp_path: Path, results_dir: Path) -> None:
    """runner.py goes through `benchrig run`'s own parsing; a valid result needs no
    jsonschema (the compiled validator accepts it) and a log no progress bar."""
    good = answer_file(tmp_path, fenced((SOLUTIONS / "lru-cache.py").read_text()))
    ran = benchrig("--task", "lru-cache", "--model", "oracle", "--agent", "replay",
                   "--provider", str(good), results_dir=results_dir,
                   command=[sys.executable, "-X", "importtime",
                            str(ROOT / "scripts" / "runner.py")])
    assert ran.code == 0, ran.stderr[-2000:]
    modules = imported(ran.stderr)
    assert "benchrig.orchestrate.runner" in modules
    # rich (~35 ms) only draws on a terminal, and stderr is a pipe
    assert not {m for m in modules if m.split(".")[0] in ("jsonschema", "rich")}
    assert "lru-cache · oracle · replay: checking" in ran.stderr
    # a replay runs nothing that could change the judge: only its own check is loaded
    assert not {"benchrig.checks.answers", "benchrig.checks.polish"} & modules
    # the run prints the table: no other format's module, and no HTTP client
    assert not {"benchrig.report.render_csv", "benchrig.report.render_json",
                "benchrig.report.render_markdown", "benchrig.report.by_task", "httpx"} & modules


def test_summary_of_valid_results_needs_neither_jsonschema_nor_rich(tmp_path: Path,
                                                                  results_dir: Path) -> None:
    good = answer_file(tmp_path, fenced((SOLUTIONS / "lru-cache.py").read_text()))
    benchrig("lru-cache", "oracle", "replay", str(good), results_dir=results_dir, command=RUN)
    ran = benchrig("summary", str(results_dir), results_dir=results_dir,
                   command=[sys.executable, "-X", "importtime", "-m", "benchrig.cli"])
    assert ran.code == 0 and "| oracle" not in ran.stdout and "oracle" in ran.stdout
    modules = imported(ran.stderr)
    assert not {m for m in modules if m.split(".")[0] in ("jsonschema", "rich")}
