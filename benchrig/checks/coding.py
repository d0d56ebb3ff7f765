"""Runs a coding task's hidden tests in BenchRig's process against a sandboxed candidate.

Each `test_*` function of tasks/<id>.test.py is one check. The test logic and the
expected values stay here; the candidate's module lives in a sandboxed child and is
reached through the sandbox's `proxy` stand-ins. Every check runs, whatever the earlier ones did:
a crashed or hung candidate is restarted for the next check, and a check passes only
when its test function returns normally and nothing went wrong at the boundary meanwhile
(a death, a timeout, a malformed reply or a value that cannot cross fails the check even
if the test caught the exception it raised).
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import math
import symtable
import sys
import time
import traceback
from collections import deque
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field, replace
from types import CodeType
from typing import Any

from benchrig import sandbox
from benchrig.checks.prefetch import predicted_calls, request_key
from benchrig.core.deadline import closing_on_stop
from benchrig.core.errors import SandboxError
from benchrig.core.task import TaskSpec
from benchrig.core.verdict import CheckDetail
from benchrig.sandbox import (
    MODULE,
    BoundaryError,
    CandidateFailure,
    CandidateProcess,
    CandidateTimeout,
    RemoteModule,
    SandboxPool,
    Session,
    read_exports,
)
from benchrig.sandbox.watchdog import CheckOverrun, boundary, run_watched
from benchrig.textsafe import NAME_CAP, PRINT_CAP, printable, stored, type_name

SOLUTION_MODULE = sandbox.MODULE_FILE  # the file the pool launches its first spares for


@dataclass(frozen=True)
class CheckReport:
    """The verdict of one coding attempt, decided entirely outside the candidate."""

    details: tuple[CheckDetail, ...]
    sandbox_error: str | None
    stdout: str
    stderr: str
    duration_s: float
    isolation: str
    sandbox: dict[str, Any] = field(default_factory=dict)  # how it was confined, cleanup

    @property
    def passed(self) -> int:
        return sum(d.passed for d in self.details)

    @property
    def total(self) -> int:
        return len(self.details)

    @property
    def all_passed(self) -> bool:
        return self.total > 0 and self.passed == self.total and self.sandbox_error is None


class CandidateRunner:
    """Owns the candidate process: starts it on demand, restarts it after a failure."""

    def __init__(self, pool: SandboxPool, code: str) -> None:
        self.pool, self.code = pool, code
        self.proc: CandidateProcess | None = None
        self.import_error: str | None = None
        self.deadline = time.monotonic()  # the current check's
        self.limit = math.inf  # the attempt's end: no check's deadline goes past it
        self.session = Session(self.send, self.ensure_started, self.left)
        self.outputs: list[tuple[str, str]] = []
        self.cleanup_problems: list[str] = []
        self.reaped_later = False  # a process of it is reaped and swept by the pool
        self.leftovers: list[str] = []
        self.limits_failed: set[str] = set()
        self.python: str | None = None
        self.uids: list[int | None] = []
        self.cpu_s: float | None = 0.0  # its processes', as the kernel counted them
        self.sandbox_failure: SandboxError | None = None
        # The calls read from the test file (checks.prefetch), sent as one batch with the
        # first import; `pending`: (request key, batch id, index) not yet read, in order.
        self.prefetch: list[dict[str, Any]] = []
        self.pending: deque[tuple[str, int, int]] = deque()

    def left(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def ensure_started(self) -> None:
        """A live candidate process, or the failure that prevents one — recorded as an
        incident of the current check, whatever the test does with the exception."""
        with boundary():  # BenchRig's own work: the test watchdog never interrupts it
            if self.import_error is not None:
                self.session.incidents.append(self.import_error)
                raise CandidateFailure(self.import_error)
            if self.proc is None:
                if self.left() <= 0:  # no fresh process per call of a test looping past its time
                    self.session.incidents.append("timed out")
                    raise CandidateTimeout("timed out")
                self._sandboxed(self._start)

    def _sandboxed(self, step: Callable[[], None]) -> None:
        """Run `step`; a SandboxError is kept so that no test can swallow it."""
        try:
            step()
        except SandboxError as exc:
            self.sandbox_failure = self.sandbox_failure or exc
            raise

    def send(self, request: dict[str, Any]) -> dict[str, Any]:
        with boundary():
            self.ensure_started()
            if self.pending and self.pending[0][0] != request_key(request):
                # The tests did not make the calls read from them: the sandbox ran ahead of
                # them, so this call gets a fresh process, as after a crash (not an incident)
                self._sandboxed(self.stop)
                self.ensure_started()
            assert self.proc is not None
            try:
                if self.pending:
                    _, ident, index = self.pending.popleft()
                    return self.proc.receive(ident, time.monotonic() + self.left(), index)
                return self.proc.request(request, self.left())
            except CandidateFailure as exc:
                self.session.incidents.append(str(exc))
                self._sandboxed(self.stop)
                raise

    def abort(self) -> None:
        """The attempt was stopped (called from another thread): no check has time left,
        so none starts a sandbox, and the one running is killed, so a call waiting on it
        returns."""
        self.limit = self.deadline = 0.0
        proc = self.proc
        if proc is not None:
            proc.abort()

    def _start(self) -> None:
        began = time.monotonic()
        self.proc = self.pool.take(SOLUTION_MODULE)
        self.uids.append(self.proc.box.uid)
        try:
            hello = self.proc.ready(self.limit)  # no start-up wait past the attempt's end
        except CandidateTimeout as exc:
            self.session.incidents.append(str(exc))
            self.stop()
            raise
        # The sandbox's start-up is not the candidate's time, but it is the attempt's.
        self.deadline = min(self.deadline + time.monotonic() - began, self.limit)
        self.limits_failed |= {str(n) for n in hello.get("limits_failed") or ()}
        self.python = str(hello.get("python"))
        self.session.generation += 1
        calls, self.prefetch = self.prefetch, []  # with the first process only
        try:
            deadline = time.monotonic() + self.left()
            ident = self.proc.send({"op": "import", "source": self.code}, deadline)
            if calls:  # written before the import's reply is read: one round trip
                batch = self.proc.send({"op": "batch", "calls": calls}, deadline)
                self.pending.extend((request_key(c), batch, i) for i, c in enumerate(calls))
            reply = self.proc.receive(ident, deadline)
        except CandidateFailure as exc:
            raise self._import_failed(str(exc)) from None
        if reply.get("ok") is not True:
            error = reply["error"] if isinstance(reply.get("error"), dict) else {}
            name = printable(str(error.get("type", "?")), NAME_CAP)
            message = stored(str(error.get("message", "")), PRINT_CAP)
            raise self._import_failed(f"{name}: {message}".strip())
        kinds = reply.get("kinds")
        self.session.kinds = {name: kind for name, kind in kinds.items()
                              if type(name) is str and kind in ("class", "function")
                              } if type(kinds) is dict else {}
        self.session.exports = read_exports(reply)

    def _import_failed(self, detail: str) -> CandidateFailure:
        """Record why the import failed and stop the process; the failure to raise."""
        self.import_error = f"importing the candidate failed: {detail}"
        self.session.incidents.append(self.import_error)
        self.stop()
        return CandidateFailure(self.import_error)

    def stop(self) -> None:
        """Done with the current process: killed now; where that kill is final, reaped and
        swept by the pool in the background (the verdict does not wait for it), else here."""
        self.pending.clear()  # replies of that process only
        if self.proc is not None:
            proc, self.proc = self.proc, None
            problem: str | None = None
            background = proc.kill_is_final
            try:
                if background:
                    proc.kill()
                else:
                    problem = proc.stop()
            finally:
                # its output as it is now: the reaper reads on, for no one (evidence only)
                self.outputs.append((proc.stdout.text(), proc.stderr.text()))
                self.cpu_s = (None if self.cpu_s is None or proc.cpu_s is None
                              else self.cpu_s + proc.cpu_s)
                if background:
                    self.pool.release(proc)
                else:
                    self.leftovers += proc.box.remove()
            self.reaped_later |= background
            if problem is not None:
                self.cleanup_problems.append(problem)


def _failure_message(exc: BaseException, test_file: str) -> str:
    if isinstance(exc, AssertionError):
        if str(exc):
            return f"assertion failed: {exc}"
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == test_file]
        line = frames[-1].line if frames else ""
        return f"assertion failed: {line}" if line else "assertion failed"
    if isinstance(exc, CandidateFailure | BoundaryError):
        return str(exc)
    if getattr(exc, "from_candidate", False):
        return f"candidate raised {type_name(exc)}: {exc}"
    return f"{type_name(exc)}: {exc}"


class LazyNames(Collection[str]):
    """`star_bindable` of a test file, read only if the file star-imports the candidate."""

    def __init__(self, source: str) -> None:
        self.source = source

    def __contains__(self, name: object) -> bool:
        return name in star_bindable(self.source)

    def __iter__(self) -> Iterator[str]:
        return iter(star_bindable(self.source))

    def __len__(self) -> int:
        return len(star_bindable(self.source))


class TestBuiltins(dict[str, Any]):
    """The test file's builtins: a name defined nowhere after `from solution import *` says
    that the candidate's module did not provide it."""

    def __init__(self, module: RemoteModule) -> None:
        super().__init__(vars(builtins))
        self.module = module

    def __missing__(self, name: str) -> Any:
        message = self.module.missing(name)
        if message is None:
            raise KeyError(name)  # Python's own "name … is not defined"
        raise NameError(message, name=name)


@functools.lru_cache(maxsize=256)
def star_bindable(source: str) -> frozenset[str]:
    """The global names the test file reads but never binds itself, builtins aside: all a
    `from solution import *` may bind in it (read with `symtable`, which knows every scope)."""
    top = symtable.symtable(source, "<tests>", "exec")
    read, bound = set(), set()
    pending = [top]
    while pending:
        table = pending.pop()
        for symbol in table.get_symbols():
            name = symbol.get_name()
            at_top = table is top
            if (at_top and (symbol.is_assigned() or symbol.is_imported()
                            or symbol.is_namespace())) or (
                    symbol.is_declared_global() and symbol.is_assigned()):
                bound.add(name)
            elif symbol.is_referenced() and (at_top or symbol.is_global()):
                read.add(name)
        pending += table.get_children()
    return frozenset(read - bound - set(vars(builtins)))


def _load_tests(task: TaskSpec, module: RemoteModule) -> dict[str, Any]:
    """Execute the test file with `solution` bound to the sandbox stand-in."""
    real_import = builtins.__import__

    def guarded_import(name: str, globals: Any = None, locals: Any = None,
                       fromlist: Any = (), level: int = 0) -> Any:
        if name != "solution":
            return real_import(name, globals, locals, fromlist, level)
        for wanted in fromlist or ():
            if wanted != "*":  # Python's own message would say "<unknown module name>"
                try:
                    getattr(module, wanted)
                except AttributeError:
                    raise ImportError(f"cannot import name {printable(wanted, NAME_CAP)!r}: "
                                      f"{MODULE} defines no {printable(wanted, NAME_CAP)!r}",
                                      name="solution") from None
        return module

    namespace: dict[str, Any] = {
        "__name__": f"benchrig_tests_{task.id.replace('-', '_')}",
        "__file__": str(task.test_path),
        "__builtins__": TestBuiltins(module),
    }
    namespace["__builtins__"]["__import__"] = guarded_import
    assert task.test_source is not None
    exec(_test_code(task.test_source, str(task.test_path)), namespace)
    return namespace


@functools.lru_cache(maxsize=256)
def _test_code(source: str, path: str) -> CodeType:
    """The test file compiled, once per run rather than once per answer (a code object is
    immutable: each answer still runs it in a fresh namespace, as the file was written)."""
    return compile(source, path, "exec")


# Killed in a pid namespace of its own (nothing in it runs on), then reaped and swept by the
# pool off the attempt's path: a failed sweep stops the pool handing out sandboxes and fails
# the run's end (SandboxPool.settle / close), so no result claims more than this.
REAPED_LATER = "killed; swept by the pool in the background"
OVERRUN = "timed out: the test was still running at the check's deadline"


def _verdict_of(error: BaseException | None, overran: bool, test_file: str,
                incidents: list[str]) -> tuple[bool, str]:
    """A test body's outcome as (passed, message); BenchRig's own failures are raised."""
    if isinstance(error, SandboxError):
        raise error
    if error is not None and not isinstance(error, Exception | CheckOverrun):
        raise error  # KeyboardInterrupt, SystemExit: not the candidate's doing
    if overran:
        return False, OVERRUN
    if error is not None:
        return False, _failure_message(error, test_file)
    return (False, incidents[0]) if incidents else (True, "passed")


def run_tests(task: TaskSpec, code: str, pool: SandboxPool | None = None,
              ends_at: float | None = None) -> CheckReport:
    """Judge `code` against the task's hidden tests; never raises for anything the code does.

    Each check gets `check_timeout_s`, and none runs past `ends_at` (time.monotonic), the
    attempt's deadline: checking spends from the same budget as the driver.

    The candidate runs in sandboxes from `pool`, the run's (its confinement and limits);
    without one, in a pool of its own with the defaults, started cold and closed when the
    verdict is in.

    Raises SandboxError when the sandbox itself fails (it could not start, or could not
    prove it cleaned up): that is BenchRig's failure, never a verdict.
    """
    if pool is None:
        with SandboxPool(prestart=False) as own:
            return run_tests(task, code, own, ends_at)
    if sys.flags.optimize:
        raise RuntimeError("BenchRig must not run with python -O: it would strip test asserts")
    started = time.monotonic()
    test_file = str(task.test_path)
    conf = pool.confinement
    runner = CandidateRunner(pool, code)
    incidents = runner.session.incidents
    details: list[CheckDetail] = []
    stack = contextlib.ExitStack()
    try:
        runner.limit = math.inf if ends_at is None else ends_at
        runner.deadline = min(time.monotonic() + task.check_timeout_s, runner.limit)
        stack.enter_context(closing_on_stop(runner.abort))  # after: abort's zeros stand
        assert task.test_source is not None
        runner.prefetch = predicted_calls(task.test_source, task.test_names)
        module = RemoteModule(runner.session, LazyNames(task.test_source))
        namespace: dict[str, Any] = {}
        error, watch = run_watched(lambda: namespace.update(_load_tests(task, module)),
                                   runner.left)
        load_error = None
        if error is not None or watch.fired:
            load_error = _verdict_of(error, watch.fired, test_file, [])[1]
        for name in task.test_names:
            began = time.monotonic()
            runner.deadline = min(began + task.check_timeout_s, runner.limit)
            if load_error is not None:
                details.append(CheckDetail(name, False, load_error, 0.0))
                continue
            incidents.clear()
            error, watch = run_watched(namespace[name], runner.left)
            passed, message = _verdict_of(error, watch.fired, test_file, incidents)
            details.append(CheckDetail(name, passed, message, time.monotonic() - began))
    finally:
        stack.close()
        runner.stop()
    if runner.sandbox_failure is not None:  # even if a test caught it: no verdict
        raise runner.sandbox_failure
    stdout = "".join(out for out, _ in runner.outputs)
    stderr = "".join(err for _, err in runner.outputs)
    problems = [*runner.cleanup_problems]
    if runner.import_error:
        problems.insert(0, runner.import_error)
    level = sandbox.NONE if runner.limits_failed else conf.level
    report = CheckReport(
        details=tuple(replace(d, message=printable(d.message)) for d in details),
        sandbox_error=printable("; ".join(problems)) or None,
        stdout=stdout,
        stderr=stderr,
        duration_s=time.monotonic() - started,
        isolation=level,
        sandbox={**conf.describe(), "isolation": level, "uids": runner.uids,
                 "python": runner.python, "limits_failed": sorted(runner.limits_failed),
                 "cleanup": "; ".join(runner.cleanup_problems) or (
                     REAPED_LATER if runner.reaped_later else "verified"),
                 "cpu_s": (None if runner.cpu_s is None or not runner.uids
                           else round(runner.cpu_s, 6)),
                 "removed_leftovers": runner.leftovers[:20]},
    )
    pool.warm(SOLUTION_MODULE)  # the next attempt starts warm (launched off this path)
    return report
