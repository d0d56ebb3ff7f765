"""The attack battery: hostile candidates against the sandbox, in full and degraded sandbox.

Every candidate in tests/helpers/attacks.py gets the verdict a correct runner must give, and after
each one the host is checked from the outside: the canary files are untouched, no secret
(environment, private file, world-readable file, hidden test) appears in any output or in
the report, no connection reached the loopback canary listeners, no process of the
candidate is alive, nothing it wrote is left on the host. Where degraded isolation cannot
keep a promise, the test asserts that the report says `degraded` and that
docs/security.md lists that promise as not held in degraded mode.
"""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import secrets
import shutil
import socket
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from benchrig import sandbox
from benchrig.checks.coding import REAPED_LATER, CheckReport, run_tests
from benchrig.core.task import TaskSpec
from benchrig.sandbox import Limits, SandboxPool
from benchrig.sandbox.confinement import ipc_objects, live_processes
from benchrig.spec import load_task
from tests.conftest import ROOT
from tests.helpers.attacks import ATTACKS, CORRECT, WRONG, Attack

ROOT_USER = os.geteuid() == 0
LIMITS = Limits(cpu_s=1, address_space_mb=512, file_size_mb=2, open_files=32, processes=24,
                scratch_mb=4)
SCRATCH_DIRS = ("/tmp", "/var/tmp", "/dev/shm")
SANDBOX_START_ALLOWANCE_S = 2.0  # a restarted sandbox's start-up is not the check's time
JUDGE_MEMORY_MIB = 200  # ~12x the 16 MiB reply cap; the unbounded judge grew by ~800

TASK = """---
id: battery-add
suite: coding
language: python
difficulty: easy
tags: [security]
timeout_s: 60
check_timeout_s: 3
entry_point: add
---

# Task: add

Write `add(a, b)` returning `a + b`.
"""

TESTS = '''"""Acceptance tests for battery-add: 4 checks. __HIDDEN__"""

from solution import add

EXPECTED_ONLY_HERE = "__HIDDEN__"


def test_small_numbers():
    assert add(2, 3) == 5
    assert add(-1, 1) == 0


def test_many_pairs():
    pairs = [(1, 2), (3, 4), (5, 6)]
    assert all(map(lambda p: add(*p) == p[0] + p[1], pairs))


def test_rejects_text():
    try:
        add("a", 1)
    except Exception:
        return
    raise AssertionError("add('a', 1) should raise")


def test_large_numbers():
    assert add(10**12, 1) == 10**12 + 1
'''


@dataclass
class Canaries:
    """Secrets and traps on the host side, and what the listeners have seen."""

    env: str
    private: Path
    private_text: str
    public: Path
    public_text: str
    hidden: str
    port: int
    abstract: str
    connections: list[str]

    def secrets(self) -> dict[str, str]:
        return {"env": self.env, "private": self.private_text, "public": self.public_text,
                "hidden": self.hidden}

    def snapshot(self) -> list[tuple[str, int, int, int]]:
        return [(p.read_text(), p.stat().st_mode, p.stat().st_mtime_ns, p.stat().st_uid)
                for p in (self.private, self.public)]


def _listen(server: socket.socket, name: str, seen: list[str]) -> None:
    while True:
        try:
            conn, _ = server.accept()
        except OSError:
            return
        seen.append(name)
        conn.close()


@pytest.fixture(scope="module")
def canaries(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Canaries]:
    private_dir = tmp_path_factory.mktemp("private")  # under pytest's 0700 folder
    private_dir.chmod(0o700)
    public_dir = Path(tempfile.mkdtemp(prefix="benchrig-canary-", dir="/tmp"))
    public_dir.chmod(0o755)  # world-readable, like most of a home folder
    (public_dir / "results").mkdir(mode=0o755)
    hidden = f"HIDDEN-{secrets.token_hex(8)}"
    found = Canaries(
        env=f"ENV-{secrets.token_hex(8)}", private=private_dir / "secret.txt",
        private_text=f"PRIVATE-{secrets.token_hex(8)}", public=public_dir / "secret.txt",
        public_text=f"PUBLIC-{secrets.token_hex(8)}", hidden=hidden, port=0,
        abstract=f"benchrig-canary-{secrets.token_hex(6)}", connections=[])
    found.private.write_text(found.private_text)
    found.private.chmod(0o600)
    found.public.write_text(found.public_text)
    found.public.chmod(0o644)
    tcp = socket.create_server(("127.0.0.1", 0))
    found.port = tcp.getsockname()[1]
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind("\0" + found.abstract)
    unix.listen()
    for server, name in ((tcp, "tcp"), (unix, "unix")):
        threading.Thread(target=_listen, args=(server, name, found.connections),
                         daemon=True).start()
    os.environ["BENCHRIG_CANARY_SECRET"] = found.env
    try:
        yield found
    finally:
        del os.environ["BENCHRIG_CANARY_SECRET"]
        tcp.close()
        unix.close()
        shutil.rmtree(public_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory, canaries: Canaries) -> TaskSpec:
    folder = tmp_path_factory.mktemp("tasks")
    (folder / "battery-add.md").write_text(TASK)
    (folder / "battery-add.test.py").write_text(TESTS.replace("__HIDDEN__", canaries.hidden))
    return load_task(folder / "battery-add.md")


def task_of(attack: Attack, usual: TaskSpec, folder: Path) -> TaskSpec:
    """The battery's task, with the attack's own hidden tests when it brings them."""
    if attack.tests is None:
        return usual
    name = f"battery-{attack.name}"
    (folder / f"{name}.md").write_text(TASK.replace("id: battery-add", f"id: {name}"))
    (folder / f"{name}.test.py").write_text(attack.tests)
    return load_task(folder / f"{name}.md")


MODES = ("full", "degraded")


@pytest.fixture(scope="module", params=MODES)
def mode(request: pytest.FixtureRequest) -> Iterator[tuple[str, SandboxPool]]:
    """Each level's sandboxes, from one pre-started pool as in a run."""
    best = sandbox.detect()
    if request.param == "full":
        if best.level != sandbox.FULL:
            pytest.skip(f"full isolation is not available here: {'; '.join(best.reasons)}")
        conf = best
    else:
        conf = best.without_namespaces("the battery's degraded run")
    with SandboxPool(conf, LIMITS) as pool:
        yield request.param, pool


@pytest.fixture(scope="module")
def limited() -> Iterator[SandboxPool]:
    """The best confinement here, with the battery's limits."""
    with SandboxPool(sandbox.detect(), LIMITS) as pool:
        yield pool


def fill(code: str, canaries: Canaries, token: str) -> str:
    for key, value in {"__TOKEN__": token, "__PORT__": str(canaries.port),
                       "__ABSTRACT__": canaries.abstract, "__PRIVATE__": str(canaries.private),
                       "__PUBLIC__": str(canaries.public),
                       "__PUBLIC_DIR__": str(canaries.public.parent)}.items():
        code = code.replace(key, value)
    return code


def documented_as_not_held(promise: str) -> bool:
    """docs/security.md's promise table says `promise` is not held in degraded mode as root."""
    for line in (ROOT / "docs" / "security.md").read_text().splitlines():
        if line.startswith(f"| `{promise}`"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            return "not held" in cells[2].lower()
    raise AssertionError(f"docs/security.md has no row for the promise {promise!r}")


def leftovers(uids: list[int], token: str) -> list[str]:
    """Entries in the shared scratch folders that the candidate wrote."""
    found = []
    for folder in SCRATCH_DIRS:
        with os.scandir(folder) as entries:
            for entry in entries:
                try:
                    owner = entry.stat(follow_symlinks=False).st_uid
                except OSError:
                    continue
                if token in entry.name or owner in uids:
                    found.append(entry.path)
    return found


def shared_folders() -> list[tuple[str, int, int]]:
    return [(f, os.stat(f).st_mode, os.stat(f).st_uid) for f in ("/", *SCRATCH_DIRS)]


def remove(paths: list[str]) -> None:
    for path in paths:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)


def surviving(uids: list[int], token: str) -> list[int]:
    alive = [pid for pid, owner in live_processes().items() if owner in uids]
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if token.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    alive.append(int(pid))
            except OSError:
                continue
    return alive


def everything_said(report: CheckReport) -> str:
    return json.dumps(dataclasses.asdict(report))


@pytest.mark.slow
@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_attack(attack: Attack, mode: tuple[str, SandboxPool], task: TaskSpec,
                canaries: Canaries, tmp_path: Path) -> None:
    name, pool = mode
    task = task_of(attack, task, tmp_path)
    confinement = pool.confinement
    if attack.unsafe_for_shared_uid and not confinement.dedicated_uid:
        pytest.skip("without a dedicated uid this attack would hit the host user's own "
                    "processes and files (documented in docs/security.md)")
    token = str(secrets.randbelow(10**9) + 10**9)
    before = canaries.snapshot()
    shared = shared_folders()
    seen = len(canaries.connections)
    peak_kib, cpu_s = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.process_time()
    report = run_tests(task, fill(attack.code, canaries, token), pool)
    cpu_s = time.process_time() - cpu_s

    # The verdict a correct runner must give.
    assert report.isolation == name
    assert report.total == 4
    verdicts = tuple(d.passed for d in report.details)
    assert report.all_passed == (attack.verdict == "pass"), report.details
    if attack.checks is not None:
        assert verdicts == attack.checks, report.details
    if attack.evidence is not None:
        assert attack.evidence in report.stdout, report.stdout[-2000:]
    assert f"PLANTED-IMPORTED-{token}" not in report.stdout
    for message in [d.message for d in report.details] + [report.sandbox_error or ""]:
        assert not any(c in message for c in "\x1b\x07\r\n\x9b"), "a message can drive a terminal"
        message.encode("utf-8")  # a lone surrogate here would make the result write fail
        assert len(message) < 10_000, "a message the candidate blew up"
    # A final kill (pid namespace, own uid) is reaped and swept by the pool afterwards
    assert report.sandbox["cleanup"] == (REAPED_LATER if name == "full" else "verified")
    if attack.message is not None:
        assert all(attack.message in d.message for d in report.details if not d.passed), \
            report.details
    if attack.cpu_at_least is not None:  # as the kernel counted it, whatever it hid
        assert report.sandbox["cpu_s"] >= attack.cpu_at_least, report.sandbox["cpu_s"]
    if attack.judge_bounded or attack.on_time:
        late = [d for d in report.details
                if d.duration_s > task.check_timeout_s + SANDBOX_START_ALLOWANCE_S]
        assert late == [], "a check outlived its deadline"
    if attack.judge_bounded:  # the judge's own cost, measured on the host
        assert cpu_s < task.check_timeout_s, f"the judge spent {cpu_s:.1f} s of CPU"
        grew_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_kib) / 1024
        assert grew_mib < JUDGE_MEMORY_MIB, f"the judge's peak memory grew by {grew_mib:.0f} MiB"

    # The host, checked from outside, once the pool has reaped what it killed.
    pool.settle()
    uids = [u for u in report.sandbox["uids"] if u is not None]
    assert uids or not confinement.dedicated_uid
    left = leftovers(uids, token)
    try:
        gives_up = attack.degraded_gives_up if name == "degraded" else None
        if gives_up is not None:  # the result must say it was degraded, and the docs must
            assert report.isolation == "degraded"  # say this promise does not hold there
            assert documented_as_not_held(gives_up)
        if gives_up in ("scratch", "ipc"):  # …while it ran: BenchRig removed it afterwards
            assert report.sandbox["removed_leftovers"], "the attack left nothing to remove?"
        assert canaries.snapshot() == before, "a canary file was changed"
        assert shared_folders() == shared, "a shared folder's mode or owner changed"
        said = everything_said(report)
        for kind, secret in canaries.secrets().items():
            if gives_up == "host-files" and kind == "public":
                continue
            assert secret not in said, f"the {kind} secret leaked"
        if gives_up != "network":
            assert len(canaries.connections) == seen, "a connection reached a canary listener"
        assert surviving(uids, token) == []
        assert all(ipc_objects(uid) == [] for uid in uids)
        assert not (canaries.public.parent / "results" / f"verdict-{token}.json").exists()
        assert left == [], "the candidate left files in the host's shared folders"
    finally:
        remove(left)


def test_the_battery_covers_every_threat_of_the_issue() -> None:
    threats = {"print anything", "write anything", "exit early", "replace builtins",
               "replace modules", "always-equal", "hidden tests on disk", "environment",
               "host files", "sockets", "fork without bound", "allocate without bound",
               "fill the disk", "detached children", "ignore signals", "kill its parent",
               "close its fds", "plant files", "plant symlinks", "limits", "stall the judge",
               "hide its cost"}
    assert {a.threat for a in ATTACKS} == threats
    assert len(ATTACKS) >= 25
    assert any(a.verdict == "pass" for a in ATTACKS) and any(a.verdict == "fail" for a in ATTACKS)


def test_what_an_agent_leaves_in_its_workspace_changes_nothing(
        task: TaskSpec, limited: SandboxPool, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted conftest/sitecustomize/solution files in the working directory, PYTHON*
    variables pointing at them: the check reads only the code it is given."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    marker = f"WORKSPACE-{secrets.token_hex(6)}"
    for planted in ("conftest.py", "sitecustomize.py", "usercustomize.py", "json.py",
                    "solution.py", "benchrig_tests_battery_add.py"):
        (workspace / planted).write_text(f"print('{marker}')\n{CORRECT}")
    monkeypatch.chdir(workspace)
    for variable in ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONUSERBASE"):
        monkeypatch.setenv(variable, str(workspace))
    monkeypatch.setenv("PYTHONINSPECT", "1")
    wrong = run_tests(task, WRONG, limited)
    right = run_tests(task, CORRECT, limited)
    assert wrong.passed == 0 and right.all_passed
    assert marker not in everything_said(wrong) + everything_said(right)


def test_a_legit_candidate_can_use_its_scratch_space(task: TaskSpec,
                                                     limited: SandboxPool) -> None:
    code = """
import os, subprocess, tempfile
with open("notes.txt", "w") as out:
    out.write("ok")
with tempfile.NamedTemporaryFile() as scratch:
    scratch.write(b"ok")
print(subprocess.run(["/usr/bin/echo", "child-ok"], capture_output=True, text=True).stdout)
""" + CORRECT
    report = run_tests(task, code, limited)
    assert report.all_passed, report.details
    assert "child-ok" in report.stdout


@pytest.mark.skipif(not ROOT_USER, reason="the sandbox only has its own uid under root")
def test_each_attempt_gets_its_own_uid(task: TaskSpec, limited: SandboxPool) -> None:
    uids = [u for _ in range(3) for u in run_tests(task, CORRECT, limited).sandbox["uids"]]
    assert len(set(uids)) == len(uids) == 3 and all(isinstance(u, int) and u >= 65536
                                                    for u in uids)


def test_a_sandbox_that_cannot_start_is_an_error_not_a_verdict(task: TaskSpec) -> None:
    from benchrig.core.errors import SandboxError

    broken = replace(sandbox.detect(), interpreter="/nonexistent/python3")
    with pytest.raises(SandboxError, match=r"did not start|cannot start"), \
            SandboxPool(broken, LIMITS) as pool:
        run_tests(task, CORRECT, pool)


@pytest.mark.skipif(sandbox.detect().bwrap is None, reason="needs bubblewrap")
def test_bubblewrap_refusing_to_start_is_an_error_naming_why(task: TaskSpec) -> None:
    from benchrig.core.errors import SandboxError

    broken = replace(sandbox.detect(), namespaces=True, bwrap_flags=("--no-such-option",))
    with pytest.raises(SandboxError, match="no-such-option"), \
            SandboxPool(broken, LIMITS) as pool:
        run_tests(task, CORRECT, pool)


def test_the_world_readable_canary_is_really_readable_by_others(canaries: Canaries) -> None:
    # The degraded host-files rows above are only meaningful if that file is exposed.
    assert canaries.public.stat().st_mode & stat.S_IROTH
    assert not canaries.private.parent.stat().st_mode & (stat.S_IROTH | stat.S_IXOTH)
