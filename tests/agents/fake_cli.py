"""Shared by the fixture CLIs: replays a scenario (JSONL) as an agent CLI would print it.

Lines are printed verbatim, one at a time, flushed. Lines with a `_fixture` key are
directives instead: sleep, write a file into the working folder, print to stderr, exit,
probe what it can reach (FAKE_AGENT_PROBE: see `_probe`; $VARS in its paths expanded),
leave a daemon behind, die by SIGKILL, or hang (with a child process in the same group, to
prove the whole group is killed).
FAKE_AGENT_SCENARIO names the scenario; FAKE_AGENT_LOG, if set, receives the argv, the
working folder, a few environment variables and the pids. A `write` that copies a file takes
it from FAKE_AGENT_FILES (default: the checkout, which a confined agent cannot see).
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOGGED_ENV = ("HOME", "IS_SANDBOX", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC")


def _log(entry: dict[str, object]) -> None:
    target = os.environ.get("FAKE_AGENT_LOG")
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry) + "\n")


def _failure(exc: OSError) -> str:
    return f"{type(exc).__name__}: {errno.errorcode.get(exc.errno or 0, exc.errno)}"


def _umount_in_userns(libc: ctypes.CDLL, path: str) -> str:
    """Unmount `path` from a child that made itself new user and mount namespaces first (it
    then holds every capability there): the outcome, or how making them failed."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        if libc.unshare(0x10000000 | 0x00020000) != 0:  # CLONE_NEWUSER | CLONE_NEWNS
            outcome = "unshare: " + errno.errorcode[ctypes.get_errno()]
        elif libc.umount2(path.encode(), 2) != 0:
            outcome = errno.errorcode[ctypes.get_errno()]
        else:
            outcome = "ok: " + ",".join(sorted(os.listdir(path)))
        os.write(write_end, outcome.encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as reader:
        outcome = reader.read().decode()
    os.waitpid(pid, 0)
    return outcome


def _probe(plan: dict[str, list[str]]) -> dict[str, dict[str, object]]:
    """What a snooping agent gets: unmount (directly, then from a user namespace of its own),
    write, read and list the paths FAKE_AGENT_PROBE names, in that order; each outcome is
    `ok`, what was read or listed, or the error."""
    found: dict[str, dict[str, object]] = {"umount": {}, "umount_in_userns": {}, "write": {},
                                           "rewrite": {}, "read": {}, "list": {}}
    plan = {kind: [os.path.expandvars(p) for p in paths] for kind, paths in plan.items()}
    libc = ctypes.CDLL(None, use_errno=True)
    for path in plan.get("umount", []):
        failed = libc.umount2(path.encode(), 2)  # MNT_DETACH
        found["umount"][path] = "ok" if failed == 0 else errno.errorcode[ctypes.get_errno()]
    for path in plan.get("umount_in_userns", []):
        found["umount_in_userns"][path] = _umount_in_userns(libc, path)
    for path in plan.get("write", []):
        try:
            with open(path, "x", encoding="utf-8") as handle:
                handle.write("planted by a snooping agent\n")
            found["write"][path] = "ok"
        except OSError as exc:
            found["write"][path] = _failure(exc)
    for path in plan.get("rewrite", []):  # replace a file that exists (e.g. a program)
        try:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write("#!/bin/sh\necho rewritten by a hostile agent\n")
            found["rewrite"][path] = "ok"
        except OSError as exc:
            found["rewrite"][path] = _failure(exc)
    for path in plan.get("read", []):
        try:
            found["read"][path] = Path(path).read_text(encoding="utf-8", errors="replace")[:200]
        except OSError as exc:
            found["read"][path] = _failure(exc)
    for path in plan.get("list", []):
        try:
            found["list"][path] = sorted(os.listdir(path))
        except OSError as exc:
            found["list"][path] = _failure(exc)
    return found


def _directive(step: dict[str, object]) -> None:
    action = step["_fixture"]
    if action == "sleep":
        time.sleep(float(step["s"]))
    elif action == "write":
        source = step.get("copy")
        files = Path(os.environ.get("FAKE_AGENT_FILES", ROOT))
        text = (files / str(source)).read_text() if source else str(step.get("text", ""))
        Path(str(step["path"])).write_text(text)
    elif action == "symlink":
        os.symlink(str(step["target"]), str(step["path"]))
    elif action == "stderr":
        print(step["text"], file=sys.stderr, flush=True)
    elif action == "probe":
        _log({"probe": _probe(json.loads(os.environ.get("FAKE_AGENT_PROBE", "{}")))})
    elif action == "daemon":  # a detached child in a session of its own, left running
        marker = os.environ.get("FAKE_AGENT_MARKER", "fake-agent-daemon")
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", marker],
                         start_new_session=True, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elif action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif action == "exit":
        sys.exit(int(step["code"]))
    elif action == "hang":
        # The marker names the child in the host's process list (its pid inside a pid
        # namespace means nothing outside).
        marker = os.environ.get("FAKE_AGENT_MARKER", "fake-agent-child")
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", marker])
        _log({"child_pid": child.pid, "child_marker": marker})
        time.sleep(3600)


def main(version: str, check_args: Callable[[list[str]], str | None]) -> None:
    args = sys.argv[1:]
    if args == ["--version"]:
        # what a CLI asked only for its version can see: where it runs, the checkout, names
        _log({"version_run": {"cwd": os.getcwd(), "env": sorted(os.environ),
                              "sees_checkout": (ROOT / "pyproject.toml").exists()}})
        print(version)
        return
    began = time.perf_counter()
    _log({"argv": args, "cwd": os.getcwd(), "pid": os.getpid(),
          "env": {name: os.environ.get(name) for name in LOGGED_ENV},
          "env_names": sorted(os.environ)})
    problem = check_args(args)
    if problem:  # as the real CLI would refuse
        print(f"error: {problem}", file=sys.stderr)
        sys.exit(1)
    scenario = Path(os.environ["FAKE_AGENT_SCENARIO"])
    try:
        for raw in scenario.read_text().splitlines():
            if not raw.strip():
                continue
            try:
                step = json.loads(raw)
            except (ValueError, RecursionError):  # a line that is not JSON is replayed too
                step = None
            if isinstance(step, dict) and "_fixture" in step:
                _directive(step)
            else:
                print(raw, flush=True)
    finally:
        _log({"own_runtime_s": time.perf_counter() - began})
