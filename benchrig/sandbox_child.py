"""The server inside the sandbox: imports the candidate and answers calls with plain data.

Runs as `python -I -S -c <codec + this source> <fd_in> <fd_out> <module_path>`; standard
library only. It holds no test logic and no expected values: it is trusted with nothing,
because the candidate shares its process. The parent decides every verdict.
"""

from __future__ import annotations

import builtins
import importlib.util
import json
import os
import sys
import traceback
from typing import Any


def _codec() -> dict[str, Any]:
    source = globals().get("CODEC_SOURCE")
    if source is None:  # imported as a module (tests): use the package's codec
        from benchrig import sandbox_codec

        return vars(sandbox_codec)
    namespace: dict[str, Any] = {"__name__": "sandbox_codec"}
    exec(compile(source, "sandbox_codec.py", "exec"), namespace)
    return namespace


CODEC = _codec()
BUILTIN_OPS: dict[str, Any] = {
    "len": lambda obj: len(obj),
    "getitem": lambda obj, key: obj[key],
    "setitem": lambda obj, key, value: obj.__setitem__(key, value),
    "delitem": lambda obj, key: obj.__delitem__(key),
    "contains": lambda obj, item: item in obj,
    "iter": lambda obj: list(obj),
    "str": lambda obj: str(obj),
    "repr": lambda obj: repr(obj),
}


class Server:
    """State of one candidate process: its module and the objects the tests hold handles to."""

    def __init__(self, module_path: str) -> None:
        self.module_path = module_path
        self.module: Any = None
        self.objects: dict[int, Any] = {}

    def load(self) -> None:
        folder = os.path.dirname(self.module_path)
        spec = importlib.util.spec_from_file_location("solution", self.module_path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {self.module_path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules["solution"] = module
        sys.path.append(folder)  # the candidate may import its own sibling modules
        spec.loader.exec_module(module)
        self.module = module

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
            self.load()
            return {"ok": True}
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
    boundary = type(exc).__name__ == "BoundaryError"
    tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
    return {
        "ok": False,
        "error": {
            "type": type(exc).__name__,
            "builtin": builtin,
            "message": str(exc)[:2000],
            "boundary": boundary,
            "traceback": "".join(tb)[-4000:],
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


def main(argv: list[str]) -> None:
    fd_in, fd_out, module_path = int(argv[0]), int(argv[1]), argv[2]
    server = Server(module_path)
    while True:
        try:
            size = int.from_bytes(_read_exact(fd_in, 4), "big")
            request = json.loads(_read_exact(fd_in, size))
        except EOFError:
            return
        try:
            reply = server.handle(request)
        except BaseException as exc:  # the candidate's failure is data for the parent
            reply = _error(exc)
        reply["id"] = request.get("id")
        try:
            data = json.dumps(reply, allow_nan=False).encode("utf-8")
        except (TypeError, ValueError) as exc:
            data = json.dumps(_error(exc) | {"id": request.get("id")}).encode("utf-8")
        _write_all(fd_out, len(data).to_bytes(4, "big") + data)


if __name__ == "__main__":
    main(sys.argv[1:])
