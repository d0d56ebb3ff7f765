"""The sandbox cannot be talked into a pass, and leaves no process of the candidate behind."""

from __future__ import annotations

import os
import secrets
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from benchrig.checks.coding import run_tests
from benchrig.core.task import TaskSpec
from benchrig.sandbox import SandboxPool, confinement
from benchrig.sandbox.pool import discard
from benchrig.spec import load_task
from tests.conftest import SOLUTIONS, TASKS, answer_file, fenced


@pytest.fixture(scope="module")
def lru() -> TaskSpec:
    """A check's time is a clock a busy machine runs out: a correct answer must pass at any
    load (2 s failed the right answer at load ~10), so only a hang waits it out."""
    return replace(load_task(TASKS / "lru-cache.md"), check_timeout_s=30.0)


@pytest.fixture(scope="module")
def lru_hasty(lru: TaskSpec) -> TaskSpec:
    """For the candidates that hang on purpose: their checks run out in 2 s."""
    return replace(lru, check_timeout_s=2.0)


def processes_with(token: str) -> list[int]:
    """Live processes whose command line carries `token` (zombies have none)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if token.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


GOOD = (SOLUTIONS / "lru-cache.py").read_text()

FORGERIES = {
    "prints a fake verdict": "print('PASSED 2/2'); print('{\"passed\": 2, \"total\": 2}')",
    "exits 0 at import": "import sys\nsys.exit(0)",
    "os._exit(0) at import": "import os\nos._exit(0)",
    "os._exit(0) in a call": (
        "import os\nclass LRUCache:\n    def __init__(self, c):\n        os._exit(0)\n"),
    "replaces builtins": (
        "import builtins\nbuiltins.AssertionError = type('X', (BaseException,), {})\n"
        "class LRUCache:\n    def __init__(self, c): pass\n"
        "    def get(self, k): return 0\n    def put(self, k, v): pass\n"),
    "always-equal result": (
        "class Eq:\n    def __eq__(self, o): return True\n    __hash__ = None\n"
        "class LRUCache:\n    def __init__(self, c): pass\n"
        "    def get(self, k): return Eq()\n    def put(self, k, v): pass\n"),
    "int subclass that equals everything": (
        "class Eq(int):\n    def __eq__(self, o): return True\n    __hash__ = int.__hash__\n"
        "class LRUCache:\n    def __init__(self, c): pass\n"
        "    def get(self, k): return Eq(0)\n    def put(self, k, v): pass\n"),
    "loops forever at import": "while True:\n    pass\n",
    "loops forever in a call": (
        "class LRUCache:\n    def __init__(self, c):\n        while True: pass\n"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(FORGERIES))
def test_forgeries_never_pass(lru_hasty: TaskSpec, name: str) -> None:
    report = run_tests(lru_hasty, FORGERIES[name])
    assert report.total == 2
    assert report.passed == 0, [d.message for d in report.details]
    assert not report.all_passed


def test_every_check_runs_after_a_crash(lru: TaskSpec) -> None:
    # put(1, 1) happens only in the first check: it kills the process; the second check
    # must still run (and pass) in a fresh one.
    code = GOOD + (
        "\nimport os\n_orig = LRUCache.put\n"
        "def _put(self, k, v):\n    if (k, v) == (1, 1):\n        os._exit(3)\n"
        "    _orig(self, k, v)\n"
        "LRUCache.put = _put\n")
    report = run_tests(lru, code)
    assert [d.passed for d in report.details] == [False, True]
    assert "exited with code 3" in report.details[0].message


@pytest.mark.slow
def test_timeouts_kill_and_the_next_check_still_runs(lru_hasty: TaskSpec) -> None:
    code = GOOD + (
        "\n_orig = LRUCache.get\n"
        "def _get(self, k):\n    if k == 4:\n        while True: pass\n    return _orig(self, k)\n"
        "LRUCache.get = _get\n")
    started = time.monotonic()
    report = run_tests(lru_hasty, code)
    assert [d.passed for d in report.details] == [False, True]
    assert "timed out" in report.details[0].message
    assert time.monotonic() - started < 2 * lru_hasty.check_timeout_s + 3


def test_child_that_sleeps_does_not_survive(lru: TaskSpec) -> None:
    token = f"{secrets.randbelow(10**9) + 10**9}"
    code = (
        "import subprocess\n"
        f"subprocess.Popen(['sleep', '{token}'])\n"
        f"subprocess.Popen(['sh', '-c', 'sleep {token}1 & sleep {token}2'])\n" + GOOD)
    report = run_tests(lru, code)
    assert report.all_passed  # a correct solution still passes…
    time.sleep(0.2)
    assert processes_with(token) == []  # …and nothing it started is left


@pytest.mark.slow
def test_hung_candidate_with_a_child_leaves_nothing(lru_hasty: TaskSpec) -> None:
    token = f"{secrets.randbelow(10**9) + 10**9}"
    code = f"import subprocess\nsubprocess.Popen(['sleep', '{token}'])\nwhile True:\n    pass\n"
    report = run_tests(lru_hasty, code)
    assert report.passed == 0
    time.sleep(0.2)
    assert processes_with(token) == []


def test_candidate_exceptions_become_failed_checks_with_reason(lru: TaskSpec) -> None:
    code = "class LRUCache:\n    def __init__(self, c):\n        raise KeyError('boom')\n"
    report = run_tests(lru, code)
    assert report.passed == 0
    assert "candidate raised KeyError" in report.details[0].message


def test_output_is_captured_capped_and_kept_as_evidence(lru: TaskSpec) -> None:
    code = "import sys\nprint('hello from candidate')\nsys.stdout.write('x' * 300000)\n" + GOOD
    report = run_tests(lru, code)
    assert report.all_passed
    assert report.stdout.startswith("hello from candidate")
    assert "more bytes dropped" in report.stdout
    assert len(report.stdout) < 70_000


def test_candidate_sees_a_cleared_environment(lru: TaskSpec, monkeypatch: pytest.MonkeyPatch
                                              ) -> None:
    monkeypatch.setenv("BENCHRIG_TEST_SECRET", "hunter2-secret")
    code = "import os\nprint(sorted(os.environ.items()))\n" + GOOD
    report = run_tests(lru, code)
    assert "hunter2-secret" not in report.stdout
    assert report.all_passed


@pytest.mark.parametrize("namespaces", [True, False])
def test_the_candidate_folder_is_removed(lru: TaskSpec, monkeypatch: pytest.MonkeyPatch,
                                         namespaces: bool) -> None:
    conf = confinement.detect()
    if not namespaces:
        conf = conf.without_namespaces()
    elif not conf.namespaces:
        pytest.skip("no bubblewrap here")
    made: list[Path | None] = []
    prepare = confinement.prepare_folder

    def recording(*args: Any) -> Path | None:
        made.append(prepare(*args))
        return made[-1]

    monkeypatch.setattr(confinement, "prepare_folder", recording)
    code = "import os\nprint('CWD=' + os.getcwd())\n" + GOOD
    with SandboxPool(conf, prestart=False) as pool:
        report = run_tests(lru, code, pool)
    assert report.all_passed
    cwd = report.stdout.split("CWD=")[1].split()[0]
    (folder,) = made
    if namespaces:  # its folder was a tmpfs inside the sandbox: nothing on the host
        assert folder is None and cwd == "/sandbox"
    else:
        assert folder is not None and cwd == str(folder) and not folder.exists()


@pytest.mark.slow
def test_a_prestarted_sandbox_carries_nothing_over(lru: TaskSpec) -> None:
    mark = secrets.token_hex(6)
    writer = (f"import os, tempfile\nfor d in ('.', tempfile.gettempdir()):\n"
              f"    open(os.path.join(d, 'mark-{mark}'), 'w').write('x')\n") + GOOD
    reader = (f"import os, tempfile\nprint('SEEN', [d for d in ('.', tempfile.gettempdir()) "
              f"if os.path.exists(os.path.join(d, 'mark-{mark}'))])\n") + GOOD
    with SandboxPool() as pool:
        first = run_tests(lru, writer, pool)
        second = run_tests(lru, reader, pool)  # on the sandbox started when the first ended
    assert first.all_passed and second.all_passed
    assert "SEEN []" in second.stdout
    assert not set(first.sandbox["uids"]) & set(second.sandbox["uids"])


def test_a_spare_that_died_waiting_is_never_handed_out(lru: TaskSpec) -> None:
    with SandboxPool() as pool:
        pool.replenish("solution.py")
        (spare,) = pool.spares()
        os.killpg(spare.proc.pid, 9)
        spare.proc.wait()
        taken = pool.take("solution.py")
        try:
            assert taken is not spare and taken.proc.poll() is None
            assert taken.ready()["limits_failed"] == []
        finally:
            discard(taken)


def test_spares_are_stopped_and_swept_when_the_pool_closes() -> None:
    with SandboxPool() as pool:
        pool.replenish("solution.py")
        (spare,) = pool.spares()
        assert spare.proc.poll() is None
    assert pool.spares() == []
    assert spare.proc.poll() is not None
    if spare.box.uid is not None:
        assert spare.box.uid not in confinement.live_processes().values()


def test_a_sandbox_stopped_before_it_has_started_its_pid_1_stops_at_once() -> None:
    # What `benchrig run` does at exit with the spare it launched after the last attempt:
    # stop it at once. Its bubblewrap has no pid 1 yet (no child to SIGKILL), and the stop
    # used to wait 2 s for a bubblewrap that was never told to end.
    from benchrig.sandbox import Limits
    from benchrig.sandbox.pool import start

    conf = confinement.detect()
    if not conf.namespaces:
        pytest.skip("no bubblewrap here")
    for _ in range(3):
        proc = start(conf, Limits(), "solution.py")
        began = time.monotonic()
        assert proc.stop() is None
        proc.box.remove()
        assert time.monotonic() - began < 1.0
        assert proc.proc.poll() is not None
        if proc.box.uid is not None:
            assert proc.box.uid not in confinement.live_processes().values()


def test_a_pool_told_how_many_sandboxes_a_run_takes_launches_that_many_and_no_more(
        lru: TaskSpec) -> None:
    # `benchrig run` knows its attempts: the first sandbox boots while the first driver
    # runs, and none is launched after the last attempt only to be stopped at exit.
    if not confinement.detect().dedicated_uid:
        pytest.skip("spares need a dedicated uid")
    with SandboxPool(expected=2) as pool:
        (first,) = pool.spares()  # launched on entering the pool, before any take
        results = [run_tests(lru, GOOD, pool)]
        (second,) = pool.spares()  # the replacement for the one more attempt expected
        results.append(run_tests(lru, GOOD, pool))
        assert pool.spares() == []  # nothing after the last one
    assert all(r.all_passed for r in results)
    assert [r.sandbox["uids"] for r in results] == [[first.box.uid], [second.box.uid]]


def custom_task(tmp_path: Path, tests: str, timeout_s: float = 1.0) -> TaskSpec:
    (tmp_path / "custom.md").write_text(
        "---\nid: custom\nsuite: coding\nlanguage: python\ndifficulty: easy\ntags: [t]\n"
        f"timeout_s: 60\ncheck_timeout_s: {timeout_s}\nentry_point: add\n---\n\n# add\n")
    (tmp_path / "custom.test.py").write_text(tests)
    return load_task(tmp_path / "custom.md")


def test_a_sandbox_failure_is_an_error_even_if_the_test_swallows_it(tmp_path: Path) -> None:
    from benchrig.core.errors import SandboxError

    task = custom_task(tmp_path, "import solution\n\ndef test_swallow():\n    try:\n"
                                 "        solution.add(1, 2)\n    except Exception:\n"
                                 "        pass\n")
    broken = replace(confinement.detect(), interpreter="/nonexistent/python3")
    with pytest.raises(SandboxError), SandboxPool(broken) as pool:
        run_tests(task, "def add(a, b):\n    return a + b\n", pool)


def test_a_test_looping_past_its_time_gets_no_fresh_sandbox_per_call(tmp_path: Path) -> None:
    task = custom_task(tmp_path, "from solution import add\n\ndef test_loop():\n"
                                 "    for _ in range(200):\n        try:\n"
                                 "            add(1, 2)\n        except Exception:\n"
                                 "            pass\n")
    report = run_tests(task, "import time\ndef add(a, b):\n    time.sleep(60)\n")
    assert [d.passed for d in report.details] == [False]
    assert "timed out" in report.details[0].message
    assert len(report.sandbox["uids"]) == 1  # one process, killed once; no churn


def test_a_failed_reimport_fails_every_later_check_even_when_caught() -> None:
    from benchrig.checks.coding import CandidateRunner
    from benchrig.sandbox import CandidateFailure

    runner = CandidateRunner(SandboxPool(prestart=False), "")
    runner.import_error = "importing the candidate failed: boom"
    with pytest.raises(CandidateFailure):
        runner.send({"op": "call", "name": "add"})
    assert runner.session.incidents == ["importing the candidate failed: boom"]


def test_an_output_flood_keeps_the_judge_small(lru: TaskSpec) -> None:
    def rss_kb() -> int:
        status = Path("/proc/self/status").read_text()
        return int(status.split("VmRSS:")[1].split()[0])

    flood = ("import os\nfor _ in range(3):\n    if os.fork() == 0:\n"
             "        while True:\n            os.write(1, b'y' * 65536)\n") + GOOD
    before = rss_kb()
    report = run_tests(lru, flood)
    assert report.all_passed, report.details
    assert "more bytes dropped" in report.stdout and len(report.stdout) < 70_000
    dropped = int(report.stdout.rsplit("[… ", 1)[1].split()[0])
    assert dropped > 1_000_000  # it really flooded…
    assert rss_kb() - before < 32_000  # …and BenchRig kept none of it


@pytest.mark.slow
def test_no_spare_is_kept_for_a_candidate_without_a_uid_of_its_own(lru: TaskSpec) -> None:
    shared = confinement.detect().without_namespaces().without_dedicated_uid()
    with SandboxPool(shared) as pool:
        assert run_tests(lru, GOOD, pool).all_passed
        assert pool.spares() == []
    own = confinement.detect()
    if own.dedicated_uid:
        with SandboxPool(own) as pool:
            assert run_tests(lru, GOOD, pool).all_passed
            assert len(pool.spares()) == 1


def test_a_closed_pool_still_judges_but_keeps_no_spare(lru: TaskSpec) -> None:
    pool = SandboxPool()
    pool.close()
    assert run_tests(lru, GOOD, pool).all_passed
    assert pool.spares() == []


def test_a_cold_pool_keeps_no_spare(lru: TaskSpec) -> None:
    with SandboxPool(prestart=False) as pool:
        assert run_tests(lru, GOOD, pool).all_passed
        assert pool.spares() == []



def test_an_attempt_judges_in_the_pool_its_run_hands_it(lru: TaskSpec, tmp_path: Path) -> None:
    from benchrig.drivers.replay import ReplayDriver
    from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for

    answer = answer_file(tmp_path, fenced(GOOD))
    shared = confinement.detect().without_namespaces().without_dedicated_uid()
    with SandboxPool(shared) as pool:
        done = run_attempt(lru, "m", ReplayDriver(), str(answer), settings_for(lru, Overrides()),
                           tmp_path / "results", sandboxes=pool)
    assert done.result["result"] == "pass"
    assert done.result["evidence"]["sandbox"]["dedicated_uid"] is False  # the pool's, not ours


BURN = ("import os, time\n\ndef burn(seconds):\n    end = time.process_time() + seconds\n"
        "    while time.process_time() < end:\n        pass\n\n"
        "burn(0.3)\nif os.fork() == 0:\n    burn(0.3)\n    os._exit(0)\nos.wait()\n"
        "if os.fork() == 0:\n    os.setsid()\n    burn(5)\n"
        "def add(a, b):\n    burn(0.3)\n    return a + b\n")


@pytest.mark.parametrize("level", ["full", "degraded"])
def test_the_candidates_cpu_time_is_counted_by_the_kernel_not_by_it(tmp_path: Path,
                                                                    level: str) -> None:
    # At import it burns 0.3 s itself and 0.3 s in a child it waits for, and leaves a
    # daemon burning; each call burns 0.3 s more. BenchRig's own CPU showed none of it.
    task = custom_task(tmp_path, "from solution import add\n\ndef test_add():\n"
                       "    assert add(1, 2) == 3\n", timeout_s=10.0)
    conf = confinement.detect()
    if level == "degraded":
        conf = conf.without_namespaces()
    elif conf.level != "full":
        pytest.skip("no full isolation here")
    with SandboxPool(conf) as pool:
        report = run_tests(task, BURN, pool)
        idle = run_tests(task, "def add(a, b):\n    return a + b\n", pool)
    assert report.all_passed, report.details
    assert 0.85 <= report.sandbox["cpu_s"] < 5.0  # 0.9 s, plus the daemon's part of a second
    assert 0.0 < idle.sandbox["cpu_s"] < 0.3


def test_a_result_records_the_candidates_cpu_time(lru: TaskSpec, tmp_path: Path) -> None:
    from benchrig.drivers.replay import ReplayDriver
    from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for

    answer = answer_file(tmp_path, fenced(GOOD))
    done = run_attempt(lru, "m", ReplayDriver(), str(answer), settings_for(lru, Overrides()),
                       tmp_path / "results")
    metrics = done.result["metrics"]
    assert 0.0 < metrics["candidate_cpu_s"] < metrics["check_s"] + 1.0
    assert metrics["candidate_cpu_s"] == done.result["evidence"]["sandbox"]["cpu_s"]
    nothing = answer_file(tmp_path, "no code here", "none.md")
    done = run_attempt(lru, "m", ReplayDriver(), str(nothing), settings_for(lru, Overrides()),
                       tmp_path / "results")
    assert done.result["metrics"]["candidate_cpu_s"] is None


# ---------------------------------------------------------------- `from solution import *`

STAR_TESTS = ("from solution import *\n\n"
              "def test_entry_point():\n    assert add(2, 3) == 5\n\n"
              "def test_helper():\n    assert double(add(1, 1)) == 4\n")
STAR_RIGHT = "def double(x):\n    return 2 * x\n\ndef add(a, b):\n    return a + b\n"


def test_star_import_binds_the_entry_point_and_its_helpers(tmp_path: Path) -> None:
    task = custom_task(tmp_path, STAR_TESTS, timeout_s=5.0)
    right = run_tests(task, STAR_RIGHT)
    assert [(d.passed, d.message) for d in right.details] == [(True, "passed")] * 2
    wrong = run_tests(task, STAR_RIGHT.replace("2 * x", "x + 3").replace("a + b", "a - b"))
    assert [d.passed for d in wrong.details] == [False, False]
    assert all(d.message.startswith("assertion failed") for d in wrong.details)


def test_star_import_passes_over_the_modules_the_candidate_imports(tmp_path: Path) -> None:
    # HumanEval-style answers start with `import math`; bound by `*`, the module could not
    # cross the boundary and every check failed ("a value of type module cannot cross")
    task = custom_task(tmp_path, STAR_TESTS, timeout_s=5.0)
    report = run_tests(task, "import math\nimport os.path\n" + STAR_RIGHT +
                       "\ndef root(x):\n    return math.sqrt(x)\n")
    assert [(d.passed, d.message) for d in report.details] == [(True, "passed")] * 2


def test_star_import_honours_the_candidates_all(tmp_path: Path) -> None:
    task = custom_task(tmp_path, STAR_TESTS, timeout_s=5.0)
    report = run_tests(task, "__all__ = ['add']\n" + STAR_RIGHT)
    assert [d.passed for d in report.details] == [True, False]
    assert report.details[1].message == ("NameError: name 'double' is not defined: the "
                                         "__all__ of the candidate's solution module does "
                                         "not list it")


def test_a_name_the_candidate_lacks_says_so(tmp_path: Path) -> None:
    star = run_tests(custom_task(tmp_path, STAR_TESTS, timeout_s=5.0),
                     "def add(a, b):\n    return a + b\n")
    assert [d.passed for d in star.details] == [True, False]
    assert star.details[1].message == ("NameError: name 'double' is not defined: the "
                                       "candidate's solution module defines no 'double'")
    named = run_tests(custom_task(tmp_path, "from solution import add, double\n\n"
                                            "def test_helper():\n    assert double(2) == 4\n"),
                      "def add(a, b):\n    return a + b\n")
    assert named.details[0].message == ("ImportError: cannot import name 'double': the "
                                        "candidate's solution module defines no 'double'")


@pytest.mark.slow
@pytest.mark.parametrize("hostile", [
    "__all__ = ['add'] * 10_000_000",
    "__all__ = ['add', 3]",
    "__all__ = ['add', 'x' * 100_000]",
    "class Boom:\n    def __iter__(self):\n        raise ValueError('no')\n__all__ = Boom()",
    "__all__ = ['add', '__class__']",
    "globals()[7] = 7",
])
@pytest.mark.parametrize("degraded", [False, True], ids=["best", "degraded"])
def test_a_hostile_all_fails_the_star_import_and_nothing_else(tmp_path: Path, hostile: str,
                                                              degraded: bool) -> None:
    conf = confinement.detect()
    conf = conf.without_namespaces("degraded run of the test") if degraded else conf
    task = custom_task(tmp_path, STAR_TESTS, timeout_s=5.0)
    with SandboxPool(conf) as pool:
        report = run_tests(task, STAR_RIGHT + hostile + "\n", pool)
        assert [d.passed for d in report.details] == [False, False]
        assert report.details[0].message.startswith(
            "ImportError: from solution import *: the candidate's solution module "), \
            report.details[0].message
        assert len(report.details[0].message) < 400
        named = custom_task(tmp_path, "from solution import add\n\n"
                                      "def test_add():\n    assert add(2, 3) == 5\n")
        assert run_tests(named, STAR_RIGHT + hostile + "\n",
                         pool).all_passed  # only `*` is refused


@pytest.mark.parametrize("forged", [
    {"names": "add"}, {"names": ["add", 3]}, {"names": ["x" * 201]},
    {"names": ["add"] * 1001}, {"names": ["__import__"]},
    {"exports_problem": "\x1b[2Jlooks fine\n" + "x" * 10_000},
])
def test_an_export_list_forged_by_the_candidate_process_is_refused(
        forged: dict[str, Any]) -> None:
    from benchrig.sandbox import read_exports

    # The candidate shares the child's process and can rewrite its import reply.
    exports = read_exports({"ok": True, **forged})
    assert exports.names == () and exports.problem
    assert "\x1b" not in exports.problem and "\n" not in exports.problem
    assert len(exports.problem) < 400
