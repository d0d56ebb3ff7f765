"""The attack battery's candidates: hostile solutions of `add(a, b)`, each with its verdict.

Placeholders the battery fills in: __TOKEN__ (digits, also a `sleep` duration, so any
process an attack leaves behind can be found by its command line), __PORT__ (the loopback
canary listener), __ABSTRACT__ (an abstract unix socket listener), __PRIVATE__ (a host
file in a private folder), __PUBLIC__ (a world-readable host file), __PUBLIC_DIR__ (its
root-owned folder). `verdict` is what a correct runner must say; `checks` pins each
check when that matters. `degraded_gives_up` names the promise (a row of the table in
docs/security.md) that degraded isolation documents as not held for this attack.
"""

from __future__ import annotations

from dataclasses import dataclass

CORRECT = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return 0\n"


@dataclass(frozen=True)
class Attack:
    name: str
    threat: str
    code: str
    verdict: str  # "pass" or "fail"
    checks: tuple[bool, ...] | None = None  # the exact per-check verdicts, when they matter
    evidence: str | None = None  # what stdout must show (a limit really bit)
    degraded_gives_up: str | None = None
    unsafe_for_shared_uid: bool = False  # would hit the host user's own processes or files
    judge_bounded: bool = False  # each check must end by its deadline, the host's memory bounded
    on_time: bool = False  # each check must end by its deadline (the judge's CPU aside)
    message: str | None = None  # what every failed check's message must say
    tests: str | None = None  # the attack's own hidden tests (4 checks of `add`), if not the usual
    cpu_at_least: float | None = None  # seconds of CPU the kernel must have counted for it


STAR_TESTS = '''"""Acceptance tests for battery-add, star-imported: 4 checks."""

from solution import *


def close(a, b):
    return abs(a - b) < 1e-9


def test_close():
    assert close(add(0.1, 0.2), 0.3)


def test_abs():
    assert abs(add(2, 3) - 5) < 1e-9


def test_round():
    assert round(add(1.25, 1.75)) == 3


def test_sum():
    assert sum([add(1, 1), add(2, 2)]) == 6
'''

SET_TESTS = '''"""Acceptance tests for battery-add, MBPP/2-style (set() of the answer): 4 checks."""

from solution import add


def test_set():
    assert set(add([3, 4], [4, 5])) == {3, 4, 5}


def test_frozenset():
    assert frozenset(add([1], [2])) == frozenset({1, 2})


def test_sorted_set():
    assert sorted(set(add([2], [1]))) == [1, 2]


def test_len_set():
    assert len(set(add([1, 1], [1]))) == 1
'''

DICT_TESTS = '''"""Acceptance tests for battery-add that build a dict from the answer: 4 checks."""

from solution import add


def test_dict():
    assert dict(add([1], [2])) == {1: 2}


def test_keys():
    assert sorted(dict(add([1, 3], [2, 4]))) == [1, 3]


def test_values():
    assert set(dict(add([1], [5])).values()) == {5}


def test_len():
    assert len(dict(add([], []))) == 0
'''

LOOP_TESTS = '''"""Acceptance tests for battery-add that loop on the answer: 4 checks."""

from solution import add


def test_loop():
    total = 0
    for _ in range(add(1, 2)):
        total += 1
    assert total == 3


def test_small_numbers():
    assert add(2, 3) == 5


def test_negative():
    assert add(-1, 1) == 0


def test_large_numbers():
    assert add(10**12, 1) == 10**12 + 1
'''

# A daemon: double fork with a new session, so only a sweep by uid or namespace finds it.
DAEMON = """
import os
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv("/usr/bin/sleep", ["sleep", "__TOKEN__"])
    os._exit(0)
os.wait()
"""

ATTACKS = [
    # --- print or write anything -------------------------------------------------------
    Attack("forge-stdout", "print anything", """
import json, sys
print("4/4 checks passed")
print(json.dumps({"result": "pass", "passed": 4, "total": 4}))
print("PASSED", file=sys.stderr)
""" + WRONG, "fail", (False,) * 4),
    Attack("forge-raw-fds-and-tty", "print anything", """
import os, sys
for fd in (1, 2):
    os.write(fd, b"\\n=== 4 passed in 0.01s ===\\n")
try:
    with open("/dev/tty", "w") as tty:
        tty.write("4 passed\\n")
except OSError:
    pass
sys.__stderr__.write('{"result": "pass"}\\n')
""" + WRONG, "fail", (False,) * 4),
    Attack("forge-protocol-frames", "print anything", """
import json, os, sys
fd_out = int(sys.argv[3])
for i in range(1, 200):
    data = json.dumps({"ok": True, "kind": "function", "value": 5, "id": i}).encode()
    os.write(fd_out, len(data).to_bytes(4, "big") + data)
""" + WRONG, "fail", (False,) * 4),
    Attack("forge-verdict-files", "write anything", """
import json, os
verdict = json.dumps({"result": "pass", "pass_at_1": True, "checks": {"passed": 4}})
for folder in (".", os.path.expanduser("~"), "/tmp", "__PUBLIC_DIR__/results"):
    try:
        with open(os.path.join(folder, "verdict-__TOKEN__.json"), "w") as out:
            out.write(verdict)
    except OSError:
        pass
""" + WRONG, "fail", (False,) * 4, degraded_gives_up="scratch"),
    Attack("terminal-escapes-in-messages", "print anything", """
class Sneaky(ValueError):
    pass
raise Sneaky("\\x1b]0;pwned\\x07\\x1b[2J\\x1b]52;c;cm0gLXJmIH4=\\x07\\r4/4 checks passed")
""", "fail", (False,) * 4),
    Attack("flood-output-from-many-processes", "print anything", """
import os, sys
for _ in range(4):
    if os.fork() == 0:
        block = b"x" * 65536
        while True:
            os.write(1 if os.getpid() % 2 else 2, block)
""" + CORRECT, "pass", evidence="more bytes dropped"),
    Attack("stdout-onto-reply-pipe", "print anything", """
import os, sys
os.dup2(int(sys.argv[3]), 1)
print("PASSED " * 100)
""" + CORRECT, "fail", (False,) * 4),
    # --- exit early in any way ------------------------------------------------------------
    Attack("sys-exit-at-import", "exit early", "import sys\nsys.exit(0)\n" + CORRECT, "fail",
           (False,) * 4),
    Attack("os-exit-at-import", "exit early", "import os\nos._exit(0)\n" + CORRECT, "fail",
           (False,) * 4),
    Attack("os-exit-in-call", "exit early",
           "import os\ndef add(a, b):\n    os._exit(0)\n", "fail", (False,) * 4),
    Attack("system-exit-in-call", "exit early",
           "def add(a, b):\n    raise SystemExit(0)\n", "fail", (False,) * 4),
    Attack("sigkill-self-in-call", "exit early",
           "import os, signal\ndef add(a, b):\n    os.kill(os.getpid(), signal.SIGKILL)\n",
           "fail", (False,) * 4),
    Attack("abort-in-call", "exit early", "import os\ndef add(a, b):\n    os.abort()\n", "fail",
           (False,) * 4),
    # The test expects add('a', 1) to raise and catches any Exception: dying must not count.
    Attack("crash-instead-of-raising", "exit early", """
import os
def add(a, b):
    if isinstance(a, str) or isinstance(b, str):
        os._exit(1)
    return a + b
""", "fail", (True, True, False, True)),
    # A rebuilt StopIteration would silently end the test's map() loop: check 2 must fail.
    Attack("stop-iteration-ends-the-loop", "exit early", """
def add(a, b):
    if (a, b) == (1, 2):
        raise StopIteration
    return a + b
""", "fail", (True, False, True, True)),
    # --- replace builtins or modules ------------------------------------------------------
    Attack("replace-builtins", "replace builtins", """
import builtins
builtins.AssertionError = type("AssertionError", (BaseException,), {})
builtins.Exception = BaseException
builtins.isinstance = lambda *args: True
""" + WRONG, "fail", (False,) * 4),
    Attack("hijack-the-server", "replace modules", """
import gc
for obj in gc.get_objects():
    if type(obj).__name__ == "Server":
        def handle(request, _orig=obj.handle):
            if request.get("op") == "call":
                return {"ok": True, "value": 5}
            return _orig(request)
        obj.handle = handle
""" + WRONG, "fail", (False,) * 4),
    Attack("patch-the-codec", "replace modules", """
import sys
sys.modules["__main__"].CODEC["encode"] = lambda value, *args, **kwargs: {"$handle": 1}
""" + WRONG, "fail", (False,) * 4),
    Attack("replace-json-module", "replace modules", """
import json, sys
class Fake:
    dumps = staticmethod(lambda obj, **kw: json.dumps({**obj, "ok": True, "value": 5}))
    loads = staticmethod(json.loads)
sys.modules["json"] = Fake
sys.modules["__main__"].json = Fake
""" + WRONG, "fail", (False,) * 4),
    # --- objects that say they are equal to anything --------------------------------------
    Attack("always-equal-object", "always-equal", """
class Eq:
    def __eq__(self, other):
        return True
    __hash__ = None
def add(a, b):
    return Eq()
""", "fail", (False,) * 4),
    Attack("always-equal-int-subclass", "always-equal", """
class Eq(int):
    def __eq__(self, other):
        return True
    __hash__ = int.__hash__
def add(a, b):
    return Eq(0)
""", "fail", (False,) * 4),
    Attack("returns-a-function", "always-equal",
           "def add(a, b):\n    return lambda *args: True\n", "fail", (False,) * 4),
    Attack("hash-flooded-set", "always-equal", """
def add(a, b):
    return {k * ((1 << 61) - 1) for k in range(1, 1000)}
""", "fail", (False,) * 4),
    Attack("oversized-reply", "always-equal",
           "def add(a, b):\n    return 'x' * (20 * 1024 * 1024)\n", "fail", (False,) * 4),
    # --- look for the hidden tests or expected values on disk ---------------------------
    Attack("hunt-hidden-tests", "hidden tests on disk", """
import os, time
deadline = time.monotonic() + 0.5
for root, dirs, files in os.walk("/"):
    if time.monotonic() > deadline:
        break
    if root == "/":
        dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev", "usr")]
    for name in files:
        if name.endswith(".test.py") or "battery" in name or "secret" in name:
            try:
                with open(os.path.join(root, name), errors="replace") as found:
                    print(root, name, found.read()[:2000])
            except OSError as exc:
                print(root, name, exc)
for pid in os.listdir("/proc"):
    if pid.isdigit():
        for what in ("cmdline", "environ"):
            try:
                with open(f"/proc/{pid}/{what}", "rb") as found:
                    print(pid, what, found.read()[:500])
            except OSError:
                pass
        try:
            print(pid, "cwd", os.listdir(f"/proc/{pid}/cwd"))
        except OSError:
            pass
""" + CORRECT, "pass", degraded_gives_up="host-files"),
    # --- environment variables and the host user's files ----------------------------------
    Attack("read-environment", "environment", """
import os
print(dict(os.environ))
for pid in ["self", "1", str(os.getppid()), *os.listdir("/proc")]:
    try:
        with open(f"/proc/{pid}/environ", "rb") as found:
            print(pid, found.read())
    except OSError as exc:
        print(pid, exc)
""" + CORRECT, "pass", unsafe_for_shared_uid=True),
    Attack("read-private-files", "host files", """
for path in ("__PRIVATE__", "/root/.bash_history", "/etc/shadow"):
    try:
        with open(path) as found:
            print(found.read())
    except OSError as exc:
        print(path, exc)
""" + CORRECT, "pass", unsafe_for_shared_uid=True),
    Attack("read-world-readable-file", "host files", """
try:
    with open("__PUBLIC__") as found:
        print(found.read())
except OSError as exc:
    print(exc)
""" + CORRECT, "pass", degraded_gives_up="host-files"),
    Attack("tamper-with-host-files", "host files", """
import os
for path in ("__PRIVATE__", "__PUBLIC__"):
    for attempt in (lambda: open(path, "w").write("pwned"), lambda: os.unlink(path),
                    lambda: os.chmod(path, 0o777), lambda: os.rename(path, path + ".x"),
                    lambda: os.link(path, "hardlink"), lambda: os.utime(path, (0, 0))):
        try:
            attempt()
        except OSError:
            pass
""" + CORRECT, "pass", unsafe_for_shared_uid=True),
    Attack("read-the-parent", "host files", """
import ctypes, os
ppid = os.getppid()
for what in ("mem", "maps", "environ", "cmdline", "fd", "cwd"):
    try:
        path = f"/proc/{ppid}/{what}"
        print(what, os.listdir(path) if what in ("fd", "cwd") else open(path, "rb").read(4096))
    except OSError as exc:
        print(what, exc)
libc = ctypes.CDLL(None, use_errno=True)
print("ptrace attach", libc.ptrace(16, ppid, None, None), ctypes.get_errno())
""" + CORRECT, "pass", unsafe_for_shared_uid=True),
    # --- sockets, loopback included -------------------------------------------------------
    Attack("loopback-tcp", "sockets", """
import socket
for host in ("127.0.0.1", "::1"):
    try:
        with socket.create_connection((host, __PORT__), timeout=0.5) as conn:
            conn.sendall(b"LEAK __TOKEN__")
        print("connected", host)
    except OSError as exc:
        print(host, exc)
""" + CORRECT, "pass", degraded_gives_up="network"),
    Attack("abstract-unix-socket", "sockets", """
import socket
client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    client.connect("\\0__ABSTRACT__")
    client.sendall(b"LEAK")
    print("connected")
except OSError as exc:
    print(exc)
""" + CORRECT, "pass", degraded_gives_up="network"),
    # --- fork without bound, detached children, signals, the parent ---------------------
    Attack("fork-bomb", "fork without bound", """
import os, time
children = 0
try:
    while children < 10000:
        if os.fork() == 0:
            time.sleep(__TOKEN__)
            os._exit(0)
        children += 1
except OSError as exc:
    print("NPROC-HIT", children, exc.errno)
""" + CORRECT, "pass", evidence="NPROC-HIT", unsafe_for_shared_uid=True),
    Attack("setsid-double-fork-daemon", "detached children", DAEMON + CORRECT, "pass"),
    Attack("fork-and-exit-chain", "detached children", """
import os
if os.fork() == 0:
    os.setsid()
    while True:  # a moving target: each generation forks the next and exits at once
        if os.fork():
            os._exit(0)
""" + CORRECT, "pass"),
    Attack("daemon-ignoring-signals", "ignore signals", """
import subprocess, sys
code = ("import signal, time\\nfor s in range(1, 32):\\n    try:\\n"
        "        signal.signal(s, signal.SIG_IGN)\\n    except (OSError, ValueError):\\n"
        "        pass\\ntime.sleep(__TOKEN__)\\n")
subprocess.Popen([sys.executable, "-c", code], start_new_session=True,
                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
""" + CORRECT, "pass"),
    Attack("hang-ignoring-signals", "ignore signals", """
import signal, time
for s in range(1, 32):
    try:
        signal.signal(s, signal.SIG_IGN)
    except (OSError, ValueError):
        pass
while True:
    time.sleep(1)
""", "fail", (False,) * 4),
    Attack("kill-the-parent", "kill its parent", """
import os, signal
for target in (os.getppid(), 1, -1):
    try:
        os.kill(target, signal.SIGKILL)
    except OSError as exc:
        print(target, exc)
try:
    os.killpg(os.getpgid(os.getppid()), signal.SIGKILL)
except OSError as exc:
    print("group", exc)
""" + CORRECT, "pass", unsafe_for_shared_uid=True),
    # --- allocate without bound, fill the disk, limits ------------------------------------
    # bytes(n) is calloc'd (no page touched), so the cap bites fast even on a loaded host.
    Attack("memory-bomb", "allocate without bound", """
try:
    hog = bytes(8 << 30)
except MemoryError:
    print("AS-HIT-1")
blocks = []
try:
    while True:
        blocks.append(bytes(16 << 20))
except MemoryError:
    print("AS-HIT-2", len(blocks))
blocks.clear()
""" + CORRECT, "pass", evidence="AS-HIT-2"),
    Attack("sysv-shared-memory", "allocate without bound", """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
ids = [libc.shmget(0, 1 << 20, 0o1600) for _ in range(8)]  # IPC_PRIVATE, IPC_CREAT | 0600
print("SHM-IDS", ids)
""" + CORRECT, "pass", evidence="SHM-IDS", degraded_gives_up="ipc"),
    Attack("fill-the-disk", "fill the disk", """
import errno, os
hits = set()
for folder in (".", os.path.expanduser("~"), "/tmp", "/dev/shm", "/var/tmp"):
    for i in range(3):
        try:
            with open(os.path.join(folder, f"fill-__TOKEN__-{i}"), "wb") as out:
                for _ in range(64):
                    out.write(bytes(1 << 20))
        except OSError as exc:
            hits.add(errno.errorcode.get(exc.errno, str(exc.errno)))
print("DISK-HIT", sorted(hits))
""" + CORRECT, "pass", evidence="DISK-HIT", degraded_gives_up="scratch",
           unsafe_for_shared_uid=True),
    Attack("open-files-without-bound", "limits", """
handles = []
try:
    while True:
        handles.append(open("/dev/null"))
except OSError:
    print("NOFILE-HIT", len(handles))
for handle in handles:
    handle.close()
""" + CORRECT, "pass", evidence="NOFILE-HIT"),
    Attack("burn-cpu", "limits", """
import resource
print("CPU-LIMIT", resource.getrlimit(resource.RLIMIT_CPU))
while True:
    pass
""", "fail", (False,) * 4, evidence="CPU-LIMIT (1, 1)"),
    # --- close its file descriptors -------------------------------------------------------
    Attack("close-every-fd", "close its fds", "import os\nos.closerange(0, 4096)\n" + CORRECT,
           "fail", (False,) * 4),
    Attack("close-stdio", "close its fds",
           "import os\nfor fd in (0, 1, 2):\n    os.close(fd)\n" + CORRECT, "pass"),
    # --- plant files or symlinks ----------------------------------------------------------
    Attack("plant-modules-then-crash", "plant files", """
import os
marker = "print('PLANTED-IMPORTED-__TOKEN__')\\n"
names = ["conftest.py", "sitecustomize.py", "usercustomize.py", "json.py", "traceback.py",
         "importlib.py", "codec.py", "child.py", "solution_test.py"]
here = os.path.dirname(os.path.abspath(__file__))
for folder in (here, os.getcwd(), os.path.expanduser("~"), "/tmp"):
    for name in names:
        try:
            with open(os.path.join(folder, name), "w") as out:
                out.write(marker)
        except OSError:
            pass
    try:
        os.makedirs(os.path.join(folder, "benchrig"), exist_ok=True)
        with open(os.path.join(folder, "benchrig", "__init__.py"), "w") as out:
            out.write(marker)
    except OSError:
        pass
def add(a, b):
    if (a, b) == (2, 3):
        os._exit(1)  # force a restart: the next process must not pick up what was planted
    return a + b
""", "fail", (False, True, True, True), degraded_gives_up="scratch"),
    Attack("plant-symlinks-to-host-paths", "plant symlinks", """
import os
targets = ["__PRIVATE__", "__PUBLIC__", "/", "/etc", "__PUBLIC_DIR__"]
here = os.path.dirname(os.path.abspath(__file__))
for folder in (here, os.path.expanduser("~"), "/tmp"):
    for i, target in enumerate(targets):
        for name in (f"link-{i}", "results", "transcript.jsonl"):
            try:
                os.symlink(target, os.path.join(folder, f"{name}-__TOKEN__"))
            except OSError:
                pass
try:
    os.rename(os.path.join(here, "solution.py"), os.path.join(here, "moved.py"))
    os.symlink("__PRIVATE__", os.path.join(here, "solution.py"))
except OSError:
    pass
""" + CORRECT, "pass", degraded_gives_up="scratch"),
    # --- text that cannot be stored or is megabytes long ----------------------------------
    Attack("surrogate-in-exception", "print anything", """
def add(a, b):
    raise ValueError("lone \\ud800 surrogate \\udfff")
""", "fail", (False, False, True, False)),
    Attack("huge-exception-class-name", "print anything", """
Huge = type("B" * 1_000_000, (ValueError,), {})
def add(a, b):
    raise Huge("x" * 1_000_000)
""", "fail", (False, False, True, False)),
    # --- make the judge pay: a reply that is cheap to send and costly to build ----------
    # 16 MiB of `[],` on the reply pipe, answering the very request (its id is on the
    # stack): ~5.6 million lists for the host to build, seconds of CPU and ~800 MB.
    Attack("reply-amplification", "allocate without bound", """
import os, sys
def add(a, b):
    frame = sys._getframe(1)
    while "request" not in frame.f_locals:
        frame = frame.f_back
    head = b'{"ok": true, "id": %d, "value": [' % frame.f_locals["request"]["id"]
    body = head + b"[]," * ((16 << 20) // 3 - 20) + b"[]]}"
    view = memoryview(len(body).to_bytes(4, "big") + body)
    while view:
        view = view[os.write(int(sys.argv[3]), view):]
    return a + b
""", "fail", (False,) * 4, judge_bounded=True, message="too large"),
    # A copy the candidate forks that falls out of its code (here on purpose; in a fork
    # chain when a fork fails at the process limit) lands in the sandbox's request loop: it
    # must neither answer nor read the harness's requests, or a correct candidate fails.
    Attack("forked-copy-falls-through", "detached children", """
import os
if os.fork() == 0:
    raise RuntimeError("the forked copy falls out of the candidate's module")
""" + CORRECT, "pass"),
    # --- the test's own names: a star-import binds what the candidate's __all__ lists -----
    # A wrong `add` and stand-ins for the builtins and the helper the test itself uses.
    Attack("star-import-shadows-builtins", "replace builtins", """
__all__ = ["add", "abs", "round", "sum", "close"]
def abs(x):
    return 0
def round(x):
    return 3
def sum(items):
    return 6
def close(a, b):
    return True
""" + WRONG, "fail", (False,) * 4, tests=STAR_TESTS),
    # --- make the judge pay: values that stall the test's own code --------------------------
    # 150,000 distinct ints hashing to 0; MBPP/2's test calls set() on the answer in BenchRig's
    # process: quadratic, in one C call no deadline can interrupt.
    Attack("hash-flooded-list", "stall the judge", """
def add(a, b):
    return [k * ((1 << 61) - 1) for k in range(1, 150_001)]
""", "fail", (False,) * 4, judge_bounded=True, message="share one hash", tests=SET_TESTS),
    # The same ints as [key, value] pairs: the test's own dict() hashes members of inner
    # lists, which no single collection's guard sees. 50,000 pairs (a dict of them unguarded
    # is ~1.2e9 probes: minutes); at 150,000 the four calls of one process outran its 1 s
    # of CPU and the fourth check failed by SIGKILL instead of by the guard.
    Attack("hash-flooded-pairs", "stall the judge", """
def add(a, b):
    return [[k * ((1 << 61) - 1), 0] for k in range(1, 50_001)]
""", "fail", (False,) * 4, judge_bounded=True, message="share one hash", tests=DICT_TESTS),
    # A value that keeps the test's own loop running: only the watchdog ends it.
    Attack("test-loops-on-the-answer", "stall the judge", """
def add(a, b):
    return 10**15 if (a, b) == (1, 2) else a + b
""", "fail", (False, True, True, True), on_time=True, message="timed out", tests=LOOP_TESTS),
    # --- hide its cost: CPU burned in a thread that has ended --------------------------------
    Attack("cpu-in-a-joined-thread", "hide its cost", """
import threading, time
def burn(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass
worker = threading.Thread(target=burn, args=(0.4,))
worker.start()
worker.join()
""" + CORRECT, "pass", cpu_at_least=0.35),
]
