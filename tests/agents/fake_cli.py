"""Shared by the fixture CLIs: replays a scenario (JSONL) as an agent CLI would print it.

Lines are printed verbatim, one at a time, flushed. Lines with a `_fixture` key are
directives instead: sleep, write a file into the working folder, print to stderr, exit,
or hang (with a child process in the same group, to prove the whole group is killed).
FAKE_AGENT_SCENARIO names the scenario; FAKE_AGENT_LOG, if set, receives the argv, the
working folder, a few environment variables and the pids.
"""

from __future__ import annotations

import json
import os
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


def _directive(step: dict[str, object]) -> None:
    action = step["_fixture"]
    if action == "sleep":
        time.sleep(float(step["s"]))
    elif action == "write":
        source = step.get("copy")
        text = (ROOT / str(source)).read_text() if source else str(step.get("text", ""))
        Path(str(step["path"])).write_text(text)
    elif action == "symlink":
        os.symlink(str(step["target"]), str(step["path"]))
    elif action == "stderr":
        print(step["text"], file=sys.stderr, flush=True)
    elif action == "exit":
        sys.exit(int(step["code"]))
    elif action == "hang":
        child = subprocess.Popen(["sleep", "600"])
        _log({"child_pid": child.pid})
        time.sleep(3600)


def main(version: str, check_args: Callable[[list[str]], str | None]) -> None:
    args = sys.argv[1:]
    if args == ["--version"]:
        print(version)
        return
    began = time.perf_counter()
    _log({"argv": args, "cwd": os.getcwd(), "pid": os.getpid(),
          "env": {name: os.environ.get(name) for name in LOGGED_ENV}})
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
