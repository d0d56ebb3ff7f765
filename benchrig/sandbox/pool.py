"""Where candidate processes come from: one pool per run, the next sandbox started ahead.

A spare is a sandbox that has been launched — fresh uid, namespaces, limits set — but has
run no candidate code: the code arrives with its import request. It is used once, for
one candidate process, and then stopped and swept like any other; nothing carries over
from one attempt to the next. Starting a sandbox costs bubblewrap plus an interpreter
(tens of milliseconds); taken from here, an attempt pays only for its own calls.
"""

from __future__ import annotations

import atexit
import contextlib
import queue
import threading
from collections.abc import Callable
from types import TracebackType

from benchrig.core.errors import SandboxError
from benchrig.sandbox.census import Census
from benchrig.sandbox.confinement import Confinement, detect
from benchrig.sandbox.process import Box, CandidateProcess, Limits

MODULE_FILE = "solution.py"  # the candidate's module, as the coding checks name it


def start(confinement: Confinement, limits: Limits, module_file: str,
          census: Census | None = None) -> CandidateProcess:
    """Launch a sandbox now (its hello is read when it is first used), always from the one
    launcher thread (see `in_background`), whichever thread asks: a sandbox launched from
    a check's short-lived thread was SIGKILLed by the kernel when that thread ended. Its uid
    comes from `census` (a pool's), else from a walk of /proc of its own."""
    if threading.current_thread() in _launcher:
        return _launch(confinement, limits, module_file, census)
    made: list[CandidateProcess] = []
    failed: list[BaseException] = []

    def launch() -> None:
        try:
            made.append(_launch(confinement, limits, module_file, census))
        except BaseException as exc:  # raised in the asking thread
            failed.append(exc)

    in_background(launch).wait()
    if failed:
        raise failed[0]
    return made[0]


def _launch(confinement: Confinement, limits: Limits, module_file: str,
            census: Census | None) -> CandidateProcess:
    box = Box.create(confinement, module_file, census)
    try:
        return CandidateProcess(box, limits)
    except BaseException:
        box.remove()
        raise


def discard(proc: CandidateProcess) -> None:
    """Stop a candidate process that will not be used, and remove its box."""
    with contextlib.suppress(SandboxError):
        proc.stop()
    proc.box.remove()


_jobs: queue.SimpleQueue[tuple[Callable[[], None], threading.Event]] = queue.SimpleQueue()
_launcher: list[threading.Thread] = []
_launcher_lock = threading.Lock()


def _launch_forever() -> None:
    while True:
        job, done = _jobs.get()
        try:
            job()
        except Exception:  # the next attempt starts its own, and reports why
            pass
        finally:
            done.set()


def in_background(job: Callable[[], None]) -> threading.Event:
    """Run `job` on the one launcher thread of this process; set when it is done.

    One thread that lives as long as the process: bubblewrap's --die-with-parent is the
    kernel's parent-death signal, and the parent is the *thread* that forked it, so a
    sandbox launched from a short-lived thread is SIGKILLed when that thread ends, spare
    or in use (issue 27's "sandbox did not start: … killed by SIGKILL"). Every launch
    goes through here (`start`).
    """
    with _launcher_lock:
        if not _launcher:
            thread = threading.Thread(target=_launch_forever, name="benchrig-sandbox-launcher",
                                      daemon=True)
            thread.start()
            _launcher.append(thread)
    done = threading.Event()
    _jobs.put((job, done))
    return done


def _why(exc: Exception) -> str:
    """Why reaping a sandbox failed, as the pool reports it."""
    return str(exc) if isinstance(exc, SandboxError) else f"reaping failed: {exc!r}"


class SandboxPool:
    """The sandboxes of one run, all confined as `confinement` says, with `limits`.

    The defaults (the one place they are chosen): the strongest confinement that works
    here (`detect()`, tried when first needed) and `Limits()`. With `prestart`, whenever a
    sandbox is taken its replacement is launched at once, so it boots while the attempt
    that took the last one runs (back to back, the next attempt finds it ready); `depth`
    spares are kept per module file. Without `prestart`, every sandbox starts cold. A run
    that knows how many sandboxes it will take says so (`expected`): no spare is launched
    beyond them (a take past them starts cold), and entering the pool (or `warm`) launches
    the first spare of MODULE_FILE at once, to boot while the run goes on. Close
    the pool (or use it as a context manager) to stop its spares and wait for the sandboxes
    it reaps in the background (`release`); one left open is closed at exit.
    """

    def __init__(self, confinement: Confinement | None = None, limits: Limits | None = None,
                 *, prestart: bool = True, depth: int = 1, expected: int | None = None
                 ) -> None:
        self._confinement = confinement
        self.limits = limits or Limits()
        self.prestart = prestart
        self.depth = depth
        self._lock = threading.Lock()
        # by the candidate module's file name, oldest (most likely booted) first
        self._spares: dict[str, list[CandidateProcess]] = {}
        self._launching: dict[str, int] = {}  # spares being launched now, per module file
        self._launched = threading.Condition(self._lock)  # a launch ended: a take may go on
        self._launches: list[threading.Event] = []  # background launches not yet done
        self._closed = False
        self._at_exit = False
        self._expected = expected  # takes still to come, when known
        # Killed sandboxes waiting to be reaped and swept off the attempts' path (`release`)
        self._reaping: queue.SimpleQueue[CandidateProcess | None] = queue.SimpleQueue()
        self._reaper: threading.Thread | None = None
        self._unreaped = 0
        self._reaped = threading.Condition(self._lock)
        self._unclean: list[str] = []  # why a reaped sandbox could not be proven gone
        # The last walk of /proc (a sweep's, on the reaper) serves the next uid allocation
        # (on the launcher): one walk a sandbox instead of two (see census.py)
        self.census = Census()

    @property
    def confinement(self) -> Confinement:
        if self._confinement is None:
            self._confinement = detect()
        return self._confinement

    def take(self, module_file: str) -> CandidateProcess:
        """The oldest spare (or the one being launched, once it is in), else a sandbox
        started now; its replacement is launched at once, beside the attempt that takes this
        one (off its path). Raises SandboxError, and hands out nothing, once a sandbox reaped
        in the background was not proven gone."""
        self._check_clean()
        counted = False
        while True:
            with self._lock:
                # Counted off `expected` in the same hold of the lock as its spare leaves: a
                # launch counting room never sees a take half done (it booted one for nobody).
                if not counted and self._expected is not None:
                    self._expected = max(0, self._expected - 1)
                counted = True
                spare = self._next_spare(module_file)
            if spare is None:
                taken = start(self.confinement, self.limits, module_file, self.census)
                break
            if spare.proc.poll() is None:
                taken = spare
                break
            discard(spare)  # it died waiting (killed from outside): never hand that out
        self.warm(module_file)
        return taken

    def _next_spare(self, module_file: str) -> CandidateProcess | None:
        """The oldest spare, else the one being launched once it is in, else None (the lock
        held). Not a cold start beside a launch under way: it would queue behind that launch
        on the one launcher thread, no sooner, and leave its spare to nobody."""
        while True:
            waiting = self._spares.get(module_file)
            if waiting:
                return waiting.pop(0)
            if not self._launching.get(module_file) or threading.current_thread() in _launcher:
                return None
            self._launched.wait()

    def warm(self, module_file: str = MODULE_FILE) -> None:
        """Launch the spares `module_file` wants, in the background (nothing if none)."""
        if self._wanted(module_file):
            done = in_background(lambda: self.replenish(module_file))
            with self._lock:
                self._launches = [*(e for e in self._launches if not e.is_set()), done]

    def expect(self, takes: int) -> None:
        """How many sandboxes the run will still take: spares are launched up to that."""
        with self._lock:
            self._expected = takes
        self.warm()

    def _wanted(self, module_file: str) -> bool:
        # Without a uid of its own a candidate could tamper with a spare of its own uid (and
        # so with the next attempt): such sandboxes start cold, after the last one is swept.
        if not self.prestart or self._closed:
            return False
        with self._lock:
            if self._room(module_file) <= 0:
                return False
        return self.confinement.dedicated_uid

    def _room(self, module_file: str) -> int:
        """How many more spares of `module_file` to launch (the lock held)."""
        have = len(self._spares.get(module_file) or ()) + self._launching.get(module_file, 0)
        wanted = self.depth if self._expected is None else min(self.depth, self._expected)
        return wanted - have

    def replenish(self, module_file: str) -> None:
        """Have `depth` spares ready or on their way (nothing when cold or closed)."""
        if not self._wanted(module_file):
            return
        while True:
            with self._lock:
                if self._closed or self._room(module_file) <= 0:
                    return
                self._launching[module_file] = self._launching.get(module_file, 0) + 1
            spare: CandidateProcess | None = None
            try:
                # any failure (an OSError from a pipe or a folder too): the next attempt
                # starts its own and reports why; a take waiting for this launch goes on
                spare = start(self.confinement, self.limits, module_file, self.census)
            except Exception:
                spare = None
            with self._lock:
                self._launching[module_file] -= 1
                self._launched.notify_all()
                if spare is not None and not self._closed:
                    self._spares.setdefault(module_file, []).append(spare)
                    if not self._at_exit:  # bubblewrap would take it down with BenchRig too
                        atexit.register(self.close)
                        self._at_exit = True
                    continue
            if spare is not None:
                discard(spare)  # the pool closed meanwhile
            return

    def release(self, proc: CandidateProcess) -> bool:
        """Done with `proc`: kill it now and, where that kill is final (a pid namespace and a
        uid of its own: see `CandidateProcess.kill_is_final`), reap it and sweep its uid on
        the pool's reaper thread, off the attempt's path; True then. Otherwise nothing is
        done (False): the caller stops it and removes its box itself."""
        if not proc.kill_is_final:
            return False
        try:
            proc.kill()
        finally:
            with self._lock:
                self._unreaped += 1
                if self._reaper is None:
                    self._reaper = threading.Thread(target=self._reap_forever, daemon=True,
                                                    name="benchrig-sandbox-reaper")
                    self._reaper.start()
                    if not self._at_exit:
                        atexit.register(self.close)
                        self._at_exit = True
            self._reaping.put(proc)
        return True

    def _reap_forever(self) -> None:
        ending = False
        while not ending:
            batch = [self._reaping.get()]
            while batch[-1] is not None:  # all that is queued: one walk of /proc sweeps them
                try:
                    batch.append(self._reaping.get_nowait())
                except queue.Empty:
                    break
            if batch[-1] is None:
                ending = True
            self._reap([proc for proc in batch if proc is not None])

    def _reap(self, batch: list[CandidateProcess]) -> None:
        """Reap each of `batch` (all killed already), then sweep all their uids at once: the
        sweep's walk still begins after every kill, and proves none of any uid is left."""
        problems: list[str | None] = []
        try:
            for proc in batch:
                try:
                    problems.append(proc.reap(sweep=False))
                except Exception as exc:
                    problems.append(_why(exc))
            # not one reap() swept already (refused at its hello, then released): its uid,
            # proven gone, may be another sandbox's now
            uids = [proc.box.uid for proc in batch
                    if proc.box.uid is not None and not proc.swept]
            try:
                if uids:
                    self.census.sweep(*uids)
                for proc in batch:
                    proc.box.remove()
            except Exception as exc:
                problems.append(_why(exc))
        finally:  # never lose the count: settle() would wait forever
            with self._lock:
                self._unclean += [p for p in problems if p is not None]
                self._unreaped -= len(batch)
                self._reaped.notify_all()

    def settle(self) -> None:
        """Wait until every sandbox released so far is reaped and swept; SandboxError if one
        could not be proven gone."""
        with self._lock:
            while self._unreaped:
                self._reaped.wait()
        self._check_clean()

    def _check_clean(self) -> None:
        with self._lock:
            unclean = list(self._unclean)
        if unclean:
            raise SandboxError("a sandbox's cleanup could not be verified: "
                               + "; ".join(unclean[:3]))

    def spares(self) -> list[CandidateProcess]:
        """The sandboxes waiting for an attempt (once those being launched are in)."""
        self._wait_launches()
        with self._lock:
            return [proc for waiting in self._spares.values() for proc in waiting]

    def _wait_launches(self) -> None:
        with self._lock:
            launches, self._launches = self._launches, []
        if threading.current_thread() not in _launcher:
            for done in launches:
                done.wait()

    def close(self) -> None:
        """Stop every spare and wait for the reaper (SandboxError if a sandbox it reaped
        could not be proven gone); later attempts still get sandboxes, started cold."""
        with self._lock:
            self._closed = True
        self._wait_launches()  # a launch under way ends with its spare discarded
        with self._lock:
            spares = [proc for waiting in self._spares.values() for proc in waiting]
            self._spares.clear()
            if self._at_exit:
                atexit.unregister(self.close)
                self._at_exit = False
            reaper, self._reaper = self._reaper, None
        for proc in spares:
            discard(proc)
        if reaper is not None:
            self._reaping.put(None)
            reaper.join()
        self._check_clean()

    def __enter__(self) -> SandboxPool:
        if self._expected:
            self.warm()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        try:
            self.close()
        except SandboxError:
            if kind is None:  # else the error under way is the one to see
                raise
