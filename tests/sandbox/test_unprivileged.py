"""The laptop path for real: BenchRig's sandbox driven by a non-root user (uid 65534).

As root, the tests start a small driver as `nobody` with the system Python (the sandbox
modules need only the standard library). Without a dedicated uid the keeper (a child
subreaper) must collect every descendant, BenchRig must hide its own environment from a
candidate of the same uid, and a candidate that kills its keeper must make the result
say that cleanup could not be verified.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers.attacks import CORRECT, DAEMON

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None or not os.access("/usr/bin/python3",
                                                                          os.X_OK),
    reason="needs root and setpriv to act as an unprivileged user")

NOBODY = 65534
DRIVER = """
import json, sys
sys.path.insert(0, sys.argv[1])
from benchrig.sandbox import CandidateFailure, Limits, detect
from benchrig.sandbox.process import Box, CandidateProcess
conf = detect()
if sys.argv[2] == "no-bwrap":
    conf = conf.without_namespaces("test: as if bubblewrap were missing")
code = sys.stdin.read()
box = Box.create(conf, "solution.py")
out = {"level": conf.level, "namespaces": conf.namespaces, "keeper": conf.keeper}
proc = CandidateProcess(box, Limits())
proc.ready()
try:
    out["import"] = proc.request({"op": "import", "source": code}, 20)
    out["call"] = proc.request({"op": "call", "name": "add", "args": [2, 3],
                                "kwargs": {"$dict": []}}, 20)
except CandidateFailure as exc:
    out["failure"] = str(exc)
out["problem"] = proc.stop()
out["stdout"] = proc.stdout.text()
box.remove()
print(json.dumps(out))
"""

def as_nobody(mode: str, code: str, env: dict[str, str] | None = None) -> dict:  # type: ignore[type-arg]
    done = subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
         "/usr/bin/python3", "-I", "-c", DRIVER, str(ROOT), mode],
        input=code, capture_output=True, text=True, timeout=120, check=False, cwd="/",
        env={"PATH": "/usr/bin:/bin", **(env or {})})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def alive_with(token: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if token.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.append(int(pid))
            except OSError:
                continue
    return found


@pytest.fixture
def token() -> str:
    value = str(secrets.randbelow(10**9) + 10**9)
    yield value
    for pid in alive_with(value):  # leave nothing behind even when a test fails
        os.kill(pid, 9)


@pytest.mark.parametrize("mode", ["no-bwrap", "bwrap"])
def test_the_keeper_collects_a_setsid_daemon(mode: str, token: str) -> None:
    out = as_nobody(mode, DAEMON.replace("__TOKEN__", token) + CORRECT)
    if mode == "bwrap" and not out["namespaces"]:
        pytest.skip("bubblewrap does not work without root here")
    assert out["level"] == "degraded" and out["keeper"] is True
    assert out["call"]["value"] == 5
    assert out["problem"] is None  # the keeper proved it had no descendant left
    assert alive_with(token) == []


def test_a_candidate_of_the_same_uid_cannot_read_benchrigs_environment() -> None:
    secret = f"SECRET-{secrets.token_hex(8)}"
    snoop = ("import os\nkeeper = os.getppid()\n"
             "benchrig = int(open(f'/proc/{keeper}/stat').read().split(')')[1].split()[1])\n"
             "for name, pid in (('KEEPER', keeper), ('BENCHRIG', benchrig)):\n"
             "    try:\n        print(name, open(f'/proc/{pid}/environ').read())\n"
             "    except OSError as exc:\n        print(name, 'refused', exc)\n") + CORRECT
    out = as_nobody("no-bwrap", snoop, env={"BENCHRIG_TEST_SECRET": secret})
    keeper, benchrig = out["stdout"].splitlines()[:2]
    assert keeper.startswith("KEEPER") and "PATH=" in keeper  # same uid: readable…
    assert benchrig.startswith("BENCHRIG refused")  # …but BenchRig made itself non-dumpable
    assert secret not in json.dumps(out)


def test_killing_the_keeper_is_reported_as_unverified_cleanup(token: str) -> None:
    code = ("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"
            + DAEMON.replace("__TOKEN__", token) + CORRECT)
    out = as_nobody("no-bwrap", code)
    assert out["problem"] is not None and "could not be verified" in out["problem"]


def test_without_bubblewrap_a_nonroot_candidate_reaches_the_network_as_documented() -> None:
    # Not a promise degraded mode keeps (docs/security.md, `network`); with bubblewrap the
    # candidate has its own network namespace even without root.
    import socket

    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(5)
    port = server.getsockname()[1]
    code = ("import socket\ntry:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=2).close()\n"
            "    print('CONNECTED')\nexcept OSError as exc:\n    print('REFUSED', exc)\n"
            ) + CORRECT
    try:
        walled = as_nobody("bwrap", code)
        if walled["namespaces"]:
            assert "REFUSED" in walled["stdout"]
        open_door = as_nobody("no-bwrap", code)
        assert "CONNECTED" in open_door["stdout"]
    finally:
        server.close()
