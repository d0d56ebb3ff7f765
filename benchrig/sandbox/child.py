"""The server inside the sandbox: imports the candidate and answers calls with plain data.

Runs (compiled together with `codec`) as `python -I -S … serve|keep <fd_in>
<fd_out> <module_path> <limits> [<control_fd>]`; standard library only, and as little
of it as possible (every import is start-up time on every attempt). Requests come from
the trusted parent as `marshal` data; replies go out as JSON, the only form the parent
parses. Before any candidate code runs it sets its resource limits and says hello (the
only message the parent trusts to describe the sandbox). After that it is trusted with
nothing, because the candidate shares its process: it holds no test logic and no
expected values, and the parent decides every verdict. In `keep` mode a keeper process
stays outside the candidate: a child subreaper that, when the parent closes the control
pipe, kills every descendant left behind.
"""

from __future__ import annotations

import builtins
import marshal
import os
import sys

TYPE_CHECKING = False  # no `typing` import at run time: the sandbox starts faster without it
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def _codec() -> dict[str, Any]:
    if "encode" in globals():  # the sandbox runs the codec's source and this one as one module
        return globals()
    from benchrig.sandbox import codec  # imported as a module (tests)

    return vars(codec)


CODEC = _codec()
BUILTIN_OPS: dict[str, Any] = {
    "len": lambda obj: len(obj),
    "getitem": lambda obj, key: obj[key],
    "setitem": lambda obj, key, value: obj.__setitem__(key, value),
    "delitem": lambda obj, key: obj.__delitem__(key),
    "contains": lambda obj, item: item in obj,
    "iter": lambda obj: list(obj),
}


MAX_EXPORTS = 1000  # names `from solution import *` may bind
MAX_EXPORT_CHARS = 200  # characters of one such name


class Server:
    """State of one candidate process: its module and the objects the tests hold handles to."""

    def __init__(self, module_path: str) -> None:
        self.module_path = module_path
        self.module: Any = None
        self.objects: dict[int, Any] = {}

    def load(self, source: str) -> None:
        """Write the candidate's module into its folder, then run it as module `solution`."""
        folder = os.path.dirname(self.module_path)
        with open(self.module_path, "w", encoding="utf-8") as handle:
            handle.write(source)
        module = type(sys)("solution")  # what `import solution` would make, minus importlib
        module.__file__ = self.module_path
        sys.modules["solution"] = module
        sys.path.append(folder)  # the candidate may import its own sibling modules
        exec(compile(source, self.module_path, "exec"), module.__dict__)
        self.module = module

    def exports(self) -> dict[str, Any]:
        """What `from solution import *` binds, as plain data: `names` (its `__all__`, else
        every name not starting with `_` that is not a module), or `exports_problem` when
        they cannot be given. Capped: the module is the candidate's, and the host checks all
        of it again. A module it imported (`import math`) cannot cross the boundary: bound
        by a star-import it would fail every check, and a test imports its own."""
        namespace = vars(self.module)
        source = "__all__" if "__all__" in namespace else "public"
        names: list[Any] = []
        try:
            if source == "__all__":
                for item in namespace["__all__"]:  # Python reads any iterable of str
                    names.append(item)
                    if len(names) > MAX_EXPORTS:
                        break
            else:
                names = [n for n, value in list(namespace.items())
                         if (type(n) is not str or not n.startswith("_"))
                         and type(value) is not type(sys)][:MAX_EXPORTS + 1]
        except Exception as exc:  # an __all__ that cannot be iterated
            return {"exports_from": source, "exports_problem":
                    f"has an __all__ that cannot be read ({type(exc).__name__[:100]})"}
        if len(names) > MAX_EXPORTS:
            return {"exports_from": source,
                    "exports_problem": f"exports more than {MAX_EXPORTS} names"}
        for name in names:
            if type(name) is not str:
                where = "its __all__" if source == "__all__" else "its namespace"
                return {"exports_from": source, "exports_problem":
                        f"has a {type(name).__name__[:100]} in {where}, not a name"}
            if len(name) > MAX_EXPORT_CHARS:
                return {"exports_from": source, "exports_problem":
                        f"exports a name longer than {MAX_EXPORT_CHARS} characters"}
        return {"exports_from": source, "names": names}

    def resolve(self, handle: int) -> Any:
        if handle not in self.objects:
            raise LookupError(f"no candidate object with handle {handle}")
        return self.objects[handle]

    def value(self, result: Any) -> dict[str, Any]:
        return {"ok": True, "value": CODEC["encode"](result)}

    def describe(self, name: str) -> dict[str, Any]:
        obj = getattr(self.module, name)
        if isinstance(obj, type):
            return {"ok": True, "kind": "class"}
        if callable(obj):
            return {"ok": True, "kind": "function"}
        return {"ok": True, "kind": "data", "value": CODEC["encode"](obj)}

    def call(self, request: dict[str, Any]) -> dict[str, Any]:
        decode = CODEC["decode"]
        args = decode(request.get("args", []), resolve=self.resolve)
        kwargs = decode(request.get("kwargs", {"$dict": []}), resolve=self.resolve)
        if "handle" in request:
            target = getattr(self.resolve(request["handle"]), request["attr"])
        else:
            target = getattr(self.module, request["name"])
        result = target(*args, **kwargs)
        if request.get("new") and isinstance(target, type):
            handle = len(self.objects) + 1
            self.objects[handle] = result
            return {"ok": True, "handle": handle}
        return self.value(result)

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request.get("op")
        if op == "import":
            self.load(request["source"])
            # What the tests will import, so that `from solution import f` needs no lookup.
            kinds = {name: ("class" if isinstance(obj, type) else "function")
                     for name, obj in list(vars(self.module).items())[:1000]
                     if type(name) is str and not name.startswith("_") and callable(obj)}
            return {"ok": True, "kinds": kinds, **self.exports()}
        if op == "lookup":
            return self.describe(request["name"])
        if op == "call":
            return self.call(request)
        if op == "getattr":
            obj = getattr(self.resolve(request["handle"]), request["name"])
            if callable(obj) and not isinstance(obj, type):
                return {"ok": True, "kind": "method"}
            return self.value(obj)
        if op == "builtin":
            decode = CODEC["decode"]
            args = decode(request.get("args", []), resolve=self.resolve)
            return self.value(BUILTIN_OPS[request["fn"]](self.resolve(request["handle"]), *args))
        return {"ok": False, "protocol": f"unknown op {op!r}"}


def _error(exc: BaseException) -> dict[str, Any]:
    builtin = next(
        (c.__name__ for c in type(exc).__mro__ if getattr(builtins, c.__name__, None) is c),
        "BaseException",
    )
    # No traceback: the judge never reads one, and formatting it cost every failing answer
    # `import traceback` (linecache, tokenize, re: ~7 ms) and a read of the candidate's source.
    boundary = type(exc).__name__ == "BoundaryError"
    return {
        "ok": False,
        "error": {
            "type": type(exc).__name__[:200],  # a class name can be megabytes long
            "builtin": builtin,
            "message": str(exc)[:2000],
            "boundary": boundary,
        },
    }


def _read_exact(fd: int, size: int) -> bytes:
    chunks = []
    while size:
        chunk = os.read(fd, size)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


LIMITS = {"cpu_s": "RLIMIT_CPU", "address_space": "RLIMIT_AS", "file_size": "RLIMIT_FSIZE",
          "open_files": "RLIMIT_NOFILE", "processes": "RLIMIT_NPROC", "core": "RLIMIT_CORE"}


def apply_limits(limits: dict[str, int]) -> list[str]:
    """Lower soft and hard limits (no way back up without privilege); names of any that failed."""
    failed = []
    try:
        import resource
    except ImportError:
        return sorted(limits)
    for name, value in limits.items():
        try:
            resource.setrlimit(getattr(resource, LIMITS[name]), (value, value))
        except (AttributeError, KeyError, ValueError, OSError):
            failed.append(name)
    return failed


def _not_plain(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _json_writer() -> Callable[[Any], bytes]:
    """JSON text of plain data via the C encoder json.dumps uses (json imports re: slow)."""
    try:
        import _json

        encoder = _json.make_encoder(None, _not_plain, _json.encode_basestring_ascii, None,
                                     ":", ",", False, False, False)
        if "".join(encoder({"a": [1, 2.5, "é", None, True]}, 0)) != (
                '{"a":[1,2.5,"\\u00e9",null,true]}'):
            raise ValueError("unexpected encoder")
        return lambda value: "".join(encoder(value, 0)).encode("ascii")
    except Exception:  # another Python: the public, slower way
        import json

        return lambda value: json.dumps(value, allow_nan=False).encode("utf-8")


to_json = _json_writer()


def frame(fd: int, message: dict[str, Any]) -> None:
    data = to_json(message)
    _write_all(fd, len(data).to_bytes(4, "big") + data)


def serve(fd_in: int, fd_out: int, module_path: str, limits: dict[str, int],
          keeper: bool) -> None:
    failed = apply_limits(limits)
    frame(fd_out, {"hello": {"pid": os.getpid(), "uid": os.getuid(), "keeper": keeper,
                             "limits_failed": failed, "python": sys.version.split()[0]}})
    server = Server(module_path)
    me = os.getpid()
    while True:
        try:
            size = int.from_bytes(_read_exact(fd_in, 4), "big")
            request = marshal.loads(_read_exact(fd_in, size))
        except EOFError:
            return
        if request.get("op") == "batch":
            # One request, one reply per call as each is done: the judge reads reply k when
            # its check k makes that very call, under check k's deadline.
            for index, call in enumerate(request.get("calls") or ()):
                answer(server, call, me, fd_out, {"id": request.get("id"), "index": index})
        else:
            answer(server, request, me, fd_out, {"id": request.get("id")})


def answer(server: Server, request: dict[str, Any], me: int, fd_out: int,
           ids: dict[str, Any]) -> None:
    """Handle one request and write its reply, tagged with `ids`."""
    try:
        reply = server.handle(request)
    except BaseException as exc:  # the candidate's failure is data for the parent
        reply = _error(exc)
    if os.getpid() != me:
        # a copy the candidate forked fell out of its code into this loop (a failed
        # fork in a chain, an exception in a child): it must neither answer nor read
        # the parent's requests. A deliberate write is still caught by the request id.
        os._exit(0)
    reply.update(ids)
    try:
        data = to_json(reply)
    except Exception as exc:
        data = to_json(_error(exc) | ids)
    _write_all(fd_out, len(data).to_bytes(4, "big") + data)


def children() -> list[int]:
    kids: list[int] = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/children") as handle:
                kids += [int(k) for k in handle.read().split()]
        except OSError:
            continue
    return kids


def keep(fd_in: int, fd_out: int, module_path: str, limits: dict[str, int],
         control: int) -> None:
    """Subreaper: serve in a child; when the parent hangs up, kill every descendant."""
    import contextlib
    import ctypes
    import signal
    import time

    class Stop(Exception):
        pass

    def stop(*_: Any) -> None:
        raise Stop

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER: orphans come here
        os._exit(70)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    server = os.fork()
    if server == 0:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        os.close(control)
        try:
            serve(fd_in, fd_out, module_path, limits, keeper=True)
        finally:
            os._exit(0)
    os.close(fd_in)
    # A private, non-blocking handle on the reply pipe (the server's stays blocking),
    # to tell the parent how the server ended: the candidate cannot hide its own exit.
    notify = [os.open(f"/proc/self/fd/{fd_out}", os.O_WRONLY | os.O_NONBLOCK)]
    os.close(fd_out)

    def reap(*_: Any) -> None:  # also frees the NPROC slots zombies would hold
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == server and notify:
                fd = notify.pop()
                with contextlib.suppress(OSError):
                    frame(fd, {"exit": os.waitstatus_to_exitcode(status)})
                os.close(fd)

    signal.signal(signal.SIGCHLD, reap)
    signal.signal(signal.SIGUSR1, stop)  # the parent's "clean up now"
    try:
        while os.read(control, 1):  # EOF or SIGUSR1: the parent wants everything gone
            pass
    except Stop:
        pass
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    deadline = time.monotonic() + 3.0
    while True:
        kids = children()
        if not kids:
            reap()
            if not children():
                os._exit(0)  # no descendant left: orphans could only have come to us
        if time.monotonic() > deadline:
            os._exit(71)
        for pid in kids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.001)
        reap()


def main(argv: list[str]) -> None:
    role, fd_in, fd_out, module_path = argv[0], int(argv[1]), int(argv[2]), argv[3]
    limits = {k: int(v) for k, v in (pair.split("=") for pair in argv[4].split(","))}
    if role == "keep":
        keep(fd_in, fd_out, module_path, limits, int(argv[5]))
    else:
        serve(fd_in, fd_out, module_path, limits, keeper=False)


if __name__ == "__main__":
    main(sys.argv[1:])
