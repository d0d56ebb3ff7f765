"""Written files made durable off the writer's path: fsynced, with their folder, by one thread."""

from __future__ import annotations

import atexit
import contextlib
import os
import queue
import sys
import threading
from pathlib import Path

from benchrig.textsafe import printable

# Why a thread: a rename already makes a write whole and visible, and it survives a crash or
# a kill -9 of BenchRig (the page cache is the kernel's). fsync guards only against the
# machine losing power, and costs an attempt ~5 ms of waiting per file on this disk; so it
# is done beside the work, and the process waits for it at exit (Ctrl-C included).
PENDING = 256  # open descriptors handed over at most: a writer waits beyond (bounded fds)

_lock = threading.Lock()
_queue: queue.Queue[tuple[int, str]] = queue.Queue(PENDING)
_thread: threading.Thread | None = None
_failed: list[str] = []


def later(fd: int, folder: Path) -> None:
    """Take ownership of `fd` (a file already written and renamed into `folder`): it and the
    folder's entry are fsynced in the background, and by this process's exit at the latest."""
    global _thread
    with _lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_work, name="benchrig-durable", daemon=True)
            _thread.start()
    _queue.put((fd, str(folder)))


def flush() -> None:
    """Wait until every file handed over so far is on disk; OSError naming what was not."""
    with _lock:
        running = _thread is not None and _thread.is_alive()
    if running:
        _queue.join()
    with _lock:  # the worker appends under it: nothing failed meanwhile is dropped
        failed, _failed[:] = list(_failed), []
    if failed:
        raise OSError(f"{len(failed)} file(s) could not be made durable: {'; '.join(failed[:5])}")


def _work() -> None:
    while True:
        batch = [_queue.get()]
        while True:  # what came meanwhile: each folder is fsynced once per batch
            try:
                batch.append(_queue.get_nowait())
            except queue.Empty:
                break
        try:
            for fd, folder in batch:
                _sync(fd, folder)
            for folder in {folder for _, folder in batch}:  # the renames: each folder's entry
                try:
                    dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
                except OSError:  # a folder removed since: nothing left to keep
                    continue
                _sync(dir_fd, folder)
        finally:  # counted done whatever happened: flush() must never wait forever
            for _ in batch:
                _queue.task_done()


def _sync(fd: int, folder: str) -> None:
    try:
        os.fsync(fd)
    except OSError as exc:  # the disk failed: said at flush, never silently dropped
        with _lock:
            _failed.append(f"{folder}: {exc.strerror or type(exc).__name__}")
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)


def _at_exit() -> None:
    try:
        flush()
    except OSError as exc:
        print(f"benchrig: {printable(str(exc))}", file=sys.stderr)
    except KeyboardInterrupt:  # a second Ctrl-C while waiting: one line, not a traceback
        print("benchrig: interrupted before the last results were fsynced (each file is "
              "whole; a power loss now could lose the newest)", file=sys.stderr)


def _forked() -> None:
    """A forked child has the queue's state but not the thread: it starts afresh."""
    global _thread, _queue, _lock
    _thread, _queue, _lock = None, queue.Queue(PENDING), threading.Lock()
    _failed.clear()


atexit.register(_at_exit)
os.register_at_fork(after_in_child=_forked)
