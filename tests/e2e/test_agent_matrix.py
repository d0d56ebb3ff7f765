"""`benchrig run --agent A --agent B`: one matrix of models × agents × tasks × runs, run by
the real CLI on two fixture agents (tests/fixtures/agents), then read back per agent by
`summary` and `compare`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from benchrig.core.errors import UsageError
from tests.conftest import cli_call
from tests.helpers.agents import FIXTURES, stream
from tests.helpers.staging import stage_files

TASKS = ("lru-cache", "flatten-dict")
AGENTS = ("claude", "codex")


def fixture_env(claude: str = "claude-success", codex: str = "codex-success") -> dict[str, str]:
    """Both fixture agents, each replaying its own scenario."""
    own = {"FAKE_AGENT_SCENARIO_CLAUDE": stream(claude),
           "FAKE_AGENT_SCENARIO_CODEX": stream(codex)}
    passed = os.environ.get("BENCHRIG_PASS_ENV", "")
    return {**own, "BENCHRIG_CLAUDE_BIN": str(FIXTURES / "claude"),
            "BENCHRIG_CODEX_BIN": str(FIXTURES / "codex"),
            "FAKE_AGENT_FILES": stage_files(),
            "BENCHRIG_PASS_ENV": ",".join(filter(None, [passed, "FAKE_AGENT_FILES", *own]))}


def results(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]


def cells(found: list[dict[str, Any]]) -> list[tuple[str, str, str, int]]:
    return sorted((r["model"], r["agent"], r["task"], r["run_index"]) for r in found)


def matrix(*agents: str, runs: int = 1) -> list[tuple[str, str, str, int]]:
    return sorted(("sonnet", agent, task, run) for agent in agents for task in TASKS
                  for run in range(runs))


def agents_args(*agents: str) -> list[str]:
    return [word for agent in agents for word in ("--agent", agent)]


def test_two_agents_are_one_matrix_with_jobs(results_dir: Path) -> None:
    ran = cli_call("run", *TASKS, "-m", "sonnet", *agents_args(*AGENTS), "--runs", "2",
                   "--jobs", "2", results_dir=results_dir, env=fixture_env())
    assert ran.code == 1, ran.stderr  # flatten-dict's scripted answer fails: a result
    found = results(results_dir)
    assert cells(found) == matrix(*AGENTS, runs=2)  # every cell once, none mixed up
    assert {(r["agent"], r["driver"]) for r in found} == {("claude", "claude"),
                                                        ("codex", "codex")}
    assert {r["settings"]["jobs"] for r in found} == {2}
    for agent in AGENTS:  # a verdict line per attempt names its own agent
        assert sum(f" sonnet {agent}: " in line for line in ran.stdout.splitlines()) == 4
    assert "/8]" in ran.stderr  # one progress count over the whole matrix


def test_dry_run_lists_each_agent(results_dir: Path) -> None:
    ran = cli_call("run", *TASKS, "-m", "a", "-m", "b", *agents_args(*AGENTS), "--jobs", "2",
                   "--dry-run", results_dir=results_dir, env=fixture_env())
    assert ran.code == 0, ran.stderr
    assert ran.stdout.splitlines()[0] == "8 attempts, --jobs 2"
    for model in ("a", "b"):
        for agent in AGENTS:
            assert f"  {model} · {agent}: 2 attempts, up to 2 at once" in ran.stdout
    assert list(results_dir.iterdir()) == []


def test_dry_run_keeps_each_drivers_lane(results_dir: Path) -> None:
    """The in-process model and an agent it serves share the embedded lane; a runtime over
    HTTP runs freely; nothing is loaded for a dry run."""
    ran = cli_call("run", "lru-cache", "-m", "smollm2", "-d", "llamacpp", "-d", "pi",
                   "-d", "openai", "-p", "openai=http://127.0.0.1:9", "--jobs", "3",
                   "--dry-run", results_dir=results_dir)
    assert ran.code == 0, ran.stderr
    assert "smollm2 · llamacpp: 1 attempt, one at a time (embedded model)" in ran.stdout
    assert "smollm2 · pi: 1 attempt, one at a time (embedded model)" in ran.stdout
    assert "smollm2 · openai: 1 attempt, up to 3 at once" in ran.stdout
    assert "pi: provider local" in ran.stderr


def test_resume_skips_per_agent(results_dir: Path) -> None:
    env = fixture_env()
    first = cli_call("run", *TASKS, "-m", "sonnet", "--agent", "claude",
                     results_dir=results_dir, env=env)
    assert first.code == 1, first.stderr
    before = {p.name for p in results_dir.glob("*.json")}
    again = cli_call("run", *TASKS, "-m", "sonnet", *agents_args(*AGENTS), "--resume",
                     results_dir=results_dir, env=env)
    assert again.code == 1, again.stderr
    assert "resuming: 2 of 4 attempts already have a result" in again.stderr
    found = results(results_dir)
    assert cells(found) == matrix(*AGENTS)  # claude's not run twice, codex's run once
    new = [r for p, r in zip(sorted(results_dir.glob("*.json")), found, strict=True)
           if p.name not in before]
    assert {r["agent"] for r in new} == {"codex"}


def test_retry_errors_retries_only_the_agent_that_errored(results_dir: Path) -> None:
    first = cli_call("run", *TASKS, "-m", "sonnet", *agents_args(*AGENTS),
                     results_dir=results_dir, env=fixture_env(claude="claude-crash"))
    assert first.code == 1, first.stderr
    assert {r["agent"] for r in results(results_dir) if r["result"] == "error"} == {"claude"}
    again = cli_call("run", *TASKS, "-m", "sonnet", *agents_args(*AGENTS), "--retry-errors",
                     results_dir=results_dir, env=fixture_env())
    assert "retrying 2 attempts" in again.stderr, again.stderr
    found = results(results_dir)
    assert sum(r["agent"] == "claude" for r in found) == 4
    assert sum(r["agent"] == "codex" for r in found) == 2


def test_summary_and_compare_read_one_row_per_agent(results_dir: Path) -> None:
    ran = cli_call("run", *TASKS, "-m", "sonnet", *agents_args(*AGENTS), "--jobs", "2",
                   results_dir=results_dir, env=fixture_env())
    assert ran.code == 1, ran.stderr
    summary = cli_call("summary", str(results_dir), "--table-only", results_dir=results_dir)
    assert summary.code == 0, summary.stderr
    rows = [line.split() for line in summary.stdout.splitlines()]
    assert [row[:3] for row in rows if row and row[0] == "sonnet"] == [
        ["sonnet", "claude", "2"], ["sonnet", "codex", "2"]]
    compared = cli_call("compare", "sonnet@claude", "sonnet@codex", str(results_dir),
                        results_dir=results_dir)
    assert compared.code == 0, compared.stderr
    assert "A = sonnet@claude: 2 results, 2 tasks" in compared.stdout
    assert "B = sonnet@codex: 2 results, 2 tasks" in compared.stdout


def test_provider_pairs_and_a_shared_value() -> None:
    from benchrig.execute.plan import LOCAL_PROVIDER, providers

    def known() -> tuple[str, ...]:
        return ("claude", "codex", "pi", "openai", "llamacpp")

    assert providers(["claude", "codex"], ["x"], ["sonnet"], known) == {"claude": "x",
                                                                       "codex": "x"}
    assert providers(["claude", "codex"], ["x", "codex=y"], ["sonnet"], known) == {
        "claude": "x", "codex": "y"}
    # a URL's own `=` is no pair; pi on the embedded model still defaults to local
    url = "http://127.0.0.1:9/v1?key=1"
    assert providers(["openai", "pi"], [f"openai={url}"], ["smollm2"], known) == {
        "openai": url, "pi": LOCAL_PROVIDER}
    assert providers(["openai"], [url], ["m"], known) == {"openai": url}
    with pytest.raises(UsageError, match="more than once"):
        providers(["claude", "codex"], ["x", "y"], ["sonnet"], known)
    with pytest.raises(UsageError, match="not one of this run"):
        providers(["claude"], ["codex=y"], ["sonnet"], known)
    with pytest.raises(UsageError, match="given twice"):
        providers(["claude"], ["claude=a", "claude=b"], ["sonnet"], known)


def test_a_driver_named_twice_runs_once(results_dir: Path) -> None:
    ran = cli_call("run", "lru-cache", "-d", "claude", "-d", "claude", "--dry-run",
                   results_dir=results_dir)
    assert ran.code == 0, ran.stderr  # a repeat of one name is one driver
    assert ran.stdout.splitlines()[0] == "1 attempt, --jobs 1"


def test_compare_by_bare_agent_names_says_which_sides_exist(results_dir: Path) -> None:
    """`compare claude codex` matches no model: the error names the model@agent sides."""
    ran = cli_call("run", *TASKS, "-m", "sonnet", *agents_args(*AGENTS), "--jobs", "2",
                   results_dir=results_dir, env=fixture_env())
    assert ran.code == 1, ran.stderr
    compared = cli_call("compare", "claude", "codex", str(results_dir),
                        results_dir=results_dir)
    assert compared.code == 2
    assert "here: sonnet@claude, sonnet@codex" in compared.stderr, compared.stderr


@pytest.mark.slow
def test_interrupted_matrix_says_how_to_resume_every_agent(results_dir: Path) -> None:
    """Ctrl-C while the second agent hangs: claude's results are kept, the line's command
    keeps both --agent, and running it finishes only codex's attempts."""
    import shlex
    import signal
    import subprocess
    import sys
    import time

    from tests.conftest import ROOT

    env = {**os.environ, "BENCHRIG_RESULTS_DIR": str(results_dir),
           **fixture_env(codex="codex-hang")}
    proc = subprocess.Popen([sys.executable, "-m", "benchrig.cli", "run", *TASKS, "-m",
                             "sonnet", *agents_args(*AGENTS)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(list(results_dir.glob("*.json"))) < 2 and time.monotonic() < deadline \
            and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    line = next(line for line in err.splitlines() if "interrupted after 2/4" in line)
    again = shlex.split(line.split("resume with ", 1)[1])
    assert again[0] == "benchrig" and again[-1] == "--resume"
    assert again.count("--agent") == 2 and "claude" in again and "codex" in again
    resumed = cli_call(*again[1:], results_dir=results_dir, env=fixture_env())
    assert "resuming: 2 of 4 attempts already have a result" in resumed.stderr, resumed.stderr
    assert cells(results(results_dir)) == matrix(*AGENTS)


def test_a_provider_pair_reaches_its_own_driver_only(tmp_path: Path, results_dir: Path) -> None:
    """replay's answer file given as `replay=FILE` beside an agent: the agent gets no
    provider, replay its file; both in one run."""
    from tests.conftest import SOLUTIONS, answer_file, fenced

    answer = answer_file(tmp_path, fenced((SOLUTIONS / "lru-cache.py").read_text()))
    ran = cli_call("run", "lru-cache", "-m", "sonnet", "-d", "replay", "-d", "claude",
                   "-p", f"replay={answer}", results_dir=results_dir, env=fixture_env())
    assert ran.code == 0, ran.stderr
    found = {r["agent"]: r for r in results(results_dir)}
    assert found["replay"]["provider"] == str(answer)
    assert found["claude"]["provider"] is None
    assert {r["result"] for r in found.values()} == {"pass"}
