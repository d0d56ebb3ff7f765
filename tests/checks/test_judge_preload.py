"""Everything that judges an answer is in memory before any driver runs: an agent that changes
BenchRig's files on disk while it works cannot change how its answer, or a later one, is judged.
Checked in a fresh interpreter, where nothing else has imported the checkers yet."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

PROBE = r"""
import json, sys
from pathlib import Path
from benchrig import sandbox
from benchrig.checks import load_checks
from benchrig.checks.judge import judge
from benchrig.core.transcript import Transcript
from benchrig.core.errors import DriverError
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
from benchrig.spec import load_tasks, task_paths

def ours():
    return {name for name in sys.modules if name.startswith("benchrig")}

report = {"child_source_before_run": sandbox.child_source.cache_info().currsize}

class Spy:
    name, kind = "spy", "agent"
    def preflight(self, model, provider):
        pass
    def run(self, request):
        report["at_driver_run"] = sorted(ours())
        report["child_source_cached"] = sandbox.child_source.cache_info().currsize
        raise DriverError("infra", "the spy only looks")

[lru] = load_tasks(task_paths(["lru-cache"]))  # imports the one check it names
report["after_loading_a_coding_task"] = sorted(ours())
run_attempt(lru, "m", Spy(), None, settings_for(lru, Overrides()), Path(sys.argv[1]))
tasks = load_tasks(task_paths([]))

load_checks()
loaded = ours()
kinds = {}
for task in tasks:
    if task.check_type is not None:  # speed tasks have no check
        kinds.setdefault(task.check_type, task)
solution = (Path(sys.argv[2]) / "lru-cache.py").read_text()
for kind, task in sorted(kinds.items()):
    files = {task.solution_file: solution} if kind == "tests" and task.id == "lru-cache" else {}
    judge(task, Transcript(answer="Final answer: 42", files=files), settings_for(task, Overrides()))
report["kinds"] = sorted(kinds)
report["imported_while_judging"] = sorted(ours() - loaded)
print(json.dumps(report))
"""


def test_checkers_and_the_sandbox_program_are_loaded_before_the_driver_runs(
        tmp_path: Path) -> None:
    solutions = ROOT / "tests" / "fixtures" / "solutions"
    done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path), str(solutions)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    # no check registers itself on import: importing the runner and loading a coding task
    # (its check is its tests) load none; run_attempt loaded every check (and read the
    # sandbox's program, unread when the attempt started) before the driver ran
    modules = {"benchrig.checks.answers", "benchrig.checks.hidden_tests", "benchrig.checks.polish"}
    assert not modules & set(report["after_loading_a_coding_task"])
    assert report["child_source_before_run"] == 0
    assert modules <= set(report["at_driver_run"])
    assert report["child_source_cached"] == 1  # the sandbox's program was read already
    # every check type the tasks use was judged, and none imported anything more of BenchRig
    assert {"tests", "final_answer", "regex", "exact_or_contains", "declension", "choices",
            "summary"} <= set(report["kinds"])
    assert report["imported_while_judging"] == []
