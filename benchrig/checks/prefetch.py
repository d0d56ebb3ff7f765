"""The candidate calls a hidden test file will make, read from its source before it runs.

A check that is one assertion on one call with literal arguments (`candidate = f` then
`assert candidate("abc") == 3`: HumanEval's, split per assertion) makes a call known before
the test runs. The calls of the leading run of such checks go to the sandbox as one batch
with the import: one round trip per problem, not one per assertion. Each reply is read
only when its check makes that very call, under that check's deadline; the verdict, the
expected values and the comparison stay in BenchRig's process as before.
"""

from __future__ import annotations

import ast
import functools
import json
from collections.abc import Sequence
from typing import Any

from benchrig.checks.extract import parse
from benchrig.sandbox.codec import BoundaryError, encode

MAX_BATCH_BYTES = 32 * 1024  # fits the request pipe beside the import: never a deadlock
MODULE = "solution"


def request_key(request: dict[str, Any]) -> str:
    """What makes two call requests the same call, as JSON text (types kept: true is not
    1, 1.0 is not 1; marshal would not do: it encodes equal strings differently)."""
    return json.dumps({k: v for k, v in request.items() if k != "id"}, sort_keys=True,
                      separators=(",", ":"))


def _candidate_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == MODULE and not node.level:
            names |= {alias.asname or alias.name for alias in node.names if alias.name != "*"}
    return names


def _literal(node: ast.expr) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _call_of(test: ast.FunctionDef, imported: set[str]) -> dict[str, Any] | None:
    """The one call request `test` makes, if its body is `[alias = f;] assert …` with exactly
    one call of a candidate function, on literal arguments, and no loop or nested scope."""
    if test.decorator_list or test.args.args or test.args.vararg or test.args.kwarg:
        return None
    body = list(test.body)
    aliases: dict[str, str] = {}
    if body and isinstance(body[0], ast.Assign) and len(body[0].targets) == 1 and isinstance(
            body[0].targets[0], ast.Name) and isinstance(body[0].value, ast.Name) and \
            body[0].value.id in imported:
        aliases[body[0].targets[0].id] = body[0].value.id
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Assert):
        return None
    scoped = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
              ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)
    calls: list[ast.Call] = []
    for node in ast.walk(body[0]):
        if isinstance(node, scoped):
            return None
        if isinstance(node, ast.Name) and (node.id in aliases or node.id in imported):
            parent_call = next((c for c in ast.walk(body[0]) if isinstance(c, ast.Call)
                                and c.func is node), None)
            if parent_call is None:
                return None  # the candidate function used otherwise than called
            calls.append(parent_call)
    if len(calls) != 1:
        return None
    call = calls[0]
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords):
        return None
    values = [_literal(a) for a in call.args]
    kwargs = {k.arg: _literal(k.value) for k in call.keywords if k.arg is not None}
    if not all(ok for ok, _ in values) or not all(ok for ok, _ in kwargs.values()):
        return None
    assert isinstance(call.func, ast.Name)
    name = aliases.get(call.func.id, call.func.id)
    try:
        return {"op": "call", "name": name, "args": encode([v for _, v in values]),
                "kwargs": encode({k: v for k, (_, v) in kwargs.items()})}
    except (BoundaryError, RecursionError, ValueError, TypeError):
        return None


def predicted_calls(source: str, test_names: Sequence[str]) -> list[dict[str, Any]]:
    """The call requests of the leading checks of `test_names` that each make one known
    call (see the module's docstring), in the order they run; stops at the first check
    that is not such (its calls, unknown, could change what later ones see). Only an
    optimisation: a file it cannot read gets no batch."""
    return [dict(c) for c in _predicted(source, tuple(test_names))]


@functools.lru_cache(maxsize=256)
def _predicted(source: str, test_names: tuple[str, ...]) -> tuple[dict[str, Any], ...]:
    try:
        return tuple(_from_tree(parse(source), test_names))
    except Exception:  # no batch is always a correct answer
        return ()


def _from_tree(tree: ast.Module, test_names: Sequence[str]) -> list[dict[str, Any]]:
    imported = _candidate_names(tree)
    if not imported:
        return []
    tests = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    if any(isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete)
           and any(isinstance(t, ast.Name) and t.id in imported
                   for t in (node.targets if isinstance(node, ast.Assign | ast.Delete)
                             else [node.target]))
           for node in tree.body):
        return []  # a module-level rebinding of an imported name: not worth reading
    calls: list[dict[str, Any]] = []
    size = 0
    for name in test_names:
        test = tests.get(name)
        request = _call_of(test, imported) if test is not None else None
        if request is None:
            break
        size += len(request_key(request))
        if size > MAX_BATCH_BYTES:
            break
        calls.append(request)
    return calls
