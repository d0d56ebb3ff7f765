"""What the hidden tests see as module `solution`: stand-ins that call into the sandbox.

Tests run in BenchRig's own (trusted) process. `from solution import LRUCache` yields a
RemoteClass; calling it creates the object inside the sandbox and returns a handle;
method calls travel as data and their results come back as plain values. A candidate
object never enters this process, so its `__eq__`, `__bool__` or `__hash__` cannot lie.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from benchrig.sandbox.codec import BoundaryError, decode, encode
from benchrig.textsafe import NAME_CAP, PRINT_CAP, printable, stored

MODULE = "the candidate's solution module"
MAX_EXPORTS = 1000  # names `from solution import *` may bind (the child caps them too)


class CandidateError(Exception):
    """The candidate raised something that is not an ordinary built-in exception."""

    from_candidate = True


Transport = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Exports:
    """What `from solution import *` binds, as the candidate's import reported it."""

    names: tuple[str, ...] = ()
    source: str = "public"  # "__all__" when the module declares it
    problem: str | None = None  # why the names cannot be star-imported


def read_exports(reply: dict[str, Any]) -> Exports:
    """The import reply's export list, checked again: it comes from the candidate's process."""
    source = "__all__" if reply.get("exports_from") == "__all__" else "public"
    problem = reply.get("exports_problem")
    if problem is not None:
        return Exports((), source, printable(str(problem), NAME_CAP))
    names = reply.get("names")
    if type(names) is not list or len(names) > MAX_EXPORTS or not all(
            type(n) is str and len(n) <= NAME_CAP for n in names):
        return Exports((), source, "reported a malformed list of names")
    # Dunder names would bind the stand-in's own attributes, not the candidate's.
    dunder = next((n for n in names if n.startswith("__")), None)
    if dunder is not None:
        return Exports((), source, f"exports {printable(dunder)!r}, which a test cannot "
                       "import from the sandbox")
    return Exports(tuple(dict.fromkeys(names)), source)


def _raise_from(error: dict[str, Any]) -> None:
    # The candidate chose the class name and the message: stored safely (a lone surrogate, a
    # class name megabytes long) before they become a check's message.
    name = printable(str(error.get("type", "")), NAME_CAP)
    builtin = str(error.get("builtin", ""))
    message = stored(str(error.get("message", "")), PRINT_CAP)
    base = getattr(builtins, builtin, None)
    text = f"{name}: {message}" if name != builtin else message
    # A rebuilt StopIteration would end the test's own map()/filter() loop early, silently.
    if isinstance(base, type) and issubclass(base, Exception) and not issubclass(
            base, StopIteration | StopAsyncIteration):
        try:
            rebuilt = base(text)
        except TypeError:  # built-ins such as UnicodeDecodeError need more arguments
            rebuilt = CandidateError(f"{name}: {message}")
        rebuilt.from_candidate = True  # type: ignore[attr-defined]
        raise rebuilt
    raise CandidateError(text)


class Session:
    """The channel the stand-ins share; `generation` changes when the child is restarted."""

    def __init__(self, transport: Transport, start: Callable[[], None] = lambda: None,
                 left: Callable[[], float] = lambda: math.inf) -> None:
        self.transport = transport
        self.start = start  # makes sure a candidate process is up (and `kinds` known)
        self.left = left  # seconds left to the current check's deadline
        self.generation = 0
        # The candidate module's callables as its import reported them: the stand-ins a
        # test imports need no round trip. Untrusted like any reply; a wrong kind fails.
        self.kinds: dict[str, str] = {}
        self.exports = Exports()
        # What went wrong at the boundary during the current check: it fails the check
        # even when the test catches the exception (a crash must not pass for a raise).
        self.incidents: list[str] = []

    def _incident(self, message: str) -> BoundaryError:
        self.incidents.append(message)
        return BoundaryError(message)

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        reply = self.transport(request)
        if reply.get("ok") is True:
            return reply
        error = reply.get("error")
        if reply.get("ok") is False and isinstance(error, dict):
            if error.get("boundary"):
                raise self._incident(stored(str(error.get("message")), PRINT_CAP))
            base = getattr(builtins, str(error.get("builtin")), None)
            if isinstance(base, type) and not issubclass(base, Exception):
                # SystemExit, KeyboardInterrupt…: it tried to end the run, not to raise
                raise self._incident(f"the candidate raised "
                                     f"{printable(str(error.get('type')), NAME_CAP)} "
                                     "(an attempt to end the run)")
            _raise_from(error)
        raise self._incident("malformed reply from the sandbox")

    def value(self, reply: dict[str, Any]) -> Any:
        if "value" not in reply:
            raise self._incident("reply carries no value")
        try:
            value = decode(reply["value"])
        except BoundaryError as exc:
            raise self._incident(str(exc)) from None
        if self.left() <= 0:  # decoding is the check's time too, as a hang is
            raise self._incident("timed out (while decoding the candidate's reply)")
        return value

    def args(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        def handle_of(obj: Any) -> int | None:
            if isinstance(obj, RemoteObject):
                return obj._handle_for(self)
            return None

        return {"args": encode(list(args), handle_of=handle_of),
                "kwargs": encode(dict(kwargs), handle_of=handle_of)}


class RemoteFunction:
    def __init__(self, session: Session, name: str) -> None:
        self._session, self._name = session, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        request = {"op": "call", "name": self._name, **self._session.args(args, kwargs)}
        return self._session.value(self._session.ask(request))

    def __repr__(self) -> str:
        return f"<candidate function {self._name}>"


class RemoteClass(RemoteFunction):
    def __call__(self, *args: Any, **kwargs: Any) -> RemoteObject:
        request = {"op": "call", "name": self._name, "new": True,
                   **self._session.args(args, kwargs)}
        reply = self._session.ask(request)
        if type(reply.get("handle")) is not int:
            raise self._session._incident(
                f"constructing {self._name} did not return an object handle")
        return RemoteObject(self._session, reply["handle"], self._name)

    def __repr__(self) -> str:
        return f"<candidate class {self._name}>"


class RemoteMethod:
    def __init__(self, owner: RemoteObject, name: str) -> None:
        self._owner, self._name = owner, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        session = self._owner._session
        request = {"op": "call", "handle": self._owner._handle_for(session), "attr": self._name,
                   **session.args(args, kwargs)}
        return session.value(session.ask(request))


class RemoteObject:
    """A handle to an object living in the sandbox; only plain values come out of it."""

    def __init__(self, session: Session, handle: int, class_name: str) -> None:
        self._session, self._handle, self._class = session, handle, class_name
        self._generation = session.generation

    def _handle_for(self, session: Session) -> int:
        if session is not self._session or session.generation != self._generation:
            raise CandidateError("this object died with an earlier candidate process")
        return self._handle

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        reply = self._session.ask({"op": "getattr", "handle": self._handle_for(self._session),
                                   "name": name})
        if reply.get("kind") == "method":
            return RemoteMethod(self, name)
        return self._session.value(reply)

    def _builtin(self, fn: str, *args: Any) -> Any:
        request = {"op": "builtin", "fn": fn, "handle": self._handle_for(self._session),
                   "args": self._session.args(args, {})["args"]}
        return self._session.value(self._session.ask(request))

    def __len__(self) -> int:
        result = self._builtin("len")
        if type(result) is not int:
            raise self._session._incident("len() of a candidate object must be an int")
        return result

    def __getitem__(self, key: Any) -> Any:
        return self._builtin("getitem", key)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._builtin("setitem", key, value)

    def __delitem__(self, key: Any) -> None:
        self._builtin("delitem", key)

    def __contains__(self, item: Any) -> bool:
        return self._builtin("contains", item) is True

    def __iter__(self) -> Any:
        return iter(self._builtin("iter"))

    def __bool__(self) -> bool:
        raise TypeError("the truth of a candidate object is not checked; compare a value")

    def __repr__(self) -> str:
        return f"<candidate {self._class} object>"


class RemoteModule:
    """Module `solution` as the tests import it: by name, or `from solution import *`."""

    def __init__(self, session: Session, bindable: Collection[str] | None = None) -> None:
        self._session = session
        self._cache: dict[str, Any] = {}
        self._star_imported = False
        # the names a star-import may bind: those the test file reads and does not define
        self._bindable = bindable

    @property
    def __all__(self) -> list[str]:
        """The candidate module's public names (its own `__all__` when it has one) that the
        test may take from it: what a star-import binds, each then fetched as a named import
        is. Never a builtin, nor (given `bindable`) a name the test defines or does not use:
        an `__all__` listing `abs` or `isinstance` would replace the test's own. Never raises
        AttributeError: Python would then fall back to `__dict__` and bind nothing."""
        self._session.start()
        exports = self._session.exports
        if exports.problem is not None:
            raise ImportError(f"from solution import *: {MODULE} {exports.problem}",
                              name="solution")
        self._star_imported = True
        return [name for name in exports.names if not hasattr(builtins, name)
                and (self._bindable is None or name in self._bindable)]

    def missing(self, name: str) -> str | None:
        """Why a name the test file uses is defined nowhere, when the candidate was to
        provide it through a star-import; None otherwise."""
        if not self._star_imported:
            return None
        shown = printable(name, NAME_CAP)
        if self._session.exports.source == "__all__":
            return f"name {shown!r} is not defined: the __all__ of {MODULE} does not list it"
        return f"name {shown!r} is not defined: {MODULE} defines no {shown!r}"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name not in self._cache:
            self._session.start()
            kind = self._session.kinds.get(name)
            if kind not in ("class", "function"):
                try:
                    reply = self._session.ask({"op": "lookup", "name": name})
                except AttributeError:
                    raise AttributeError(
                        f"{MODULE} defines no {printable(name, NAME_CAP)!r}") from None
                kind = reply.get("kind")
                if kind not in ("class", "function"):
                    return self._session.value(reply)
            stand_in = RemoteClass if kind == "class" else RemoteFunction
            self._cache[name] = stand_in(self._session, name)
        return self._cache[name]
