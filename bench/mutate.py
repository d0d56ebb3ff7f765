"""A small AST mutation run: how many deliberate bugs in a module its tests catch.

    .venv/bin/python bench/mutate.py [--module benchrig/textsafe.py ...] [--tests FILE ...]
                                     [--max N] [--seed S] [--timeout SECONDS] [--list]

Each mutant changes one thing in one module: a comparison (`<` ↔ `<=`, `==` ↔ `!=`, `in` ↔
`not in`, `<` → `>=` …), an arithmetic operator (`+` ↔ `-`, `*` ↔ `/`, `//` → `/`, `<<` ↔
`>>` …), a constant (0 → 1, 1 → 0, n → n + 1, True ↔ False), a boolean operator (`and` ↔
`or`), `return x` → `return None`, a `not` or a unary minus removed, or one statement of a
function body dropped (replaced by `pass`). Docstrings, annotations and string constants
are left alone. Every mutant is written into one temporary copy of the repository (never
the tree being worked on), and the test files mapped to its module (MAPPED, or `--tests`)
run against it one mutant at a time (`pytest -x -q -p no:cacheprovider -m "not slow"`,
forked from a worker that has pytest imported, so a run does not pay its start-up), under
a timeout.
A mutant is killed when the tests fail, survives when they pass; a survivor listed in
bench/mutate_equivalent.txt (with the reason it cannot change behaviour) is counted as
equivalent. The score is killed ÷ (mutants − equivalent), timeouts counted as killed.
Figures go to docs/benchmarks.md ("Mutation testing").
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import json
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ALLOW_LIST = ROOT / "bench" / "mutate_equivalent.txt"
# The test files that speak for each module: its unit tests, without the slow lane.
# The fast, pointed ones first: -x stops a killed mutant's run at the first failure.
MAPPED: dict[str, list[str]] = {
    "benchrig/textsafe.py": ["tests/test_textsafe_pinned.py", "tests/report/test_html.py"],
    "benchrig/report/stats.py": ["tests/report/test_stats_pinned.py",
                                 "tests/report/test_stats.py",
                                 "tests/report/test_compare.py"],
    "benchrig/checks/answers.py": ["tests/checks/test_answers_pinned.py",
                                   "tests/checks/test_scenarios.py",
                                   "tests/checks/test_answer_config.py",
                                   "tests/checks/test_evaluators.py"],
    "benchrig/checks/rules.py": ["tests/checks/test_answers_pinned.py",
                                 "tests/checks/test_scenarios.py",
                                 "tests/checks/test_answer_config.py"],
}
PYTEST = ["-x", "-q", "-p", "no:cacheprovider", "-m", "not slow"]
LAST_RUN = "last-run.log"  # in the copy: the output of the latest test run, for a failed baseline
# What the worker imports once, before it forks a run (third-party only).
PRELOAD = ("_pytest.python", "_pytest.assertion.rewrite", "hypothesis", "yaml", "jsonschema",
           "jsonschema_rs", "httpx")
COPY_IGNORED = shutil.ignore_patterns(".git", ".venv", ".agents", "__pycache__", "*.pyc",
                                      ".mypy_cache", ".ruff_cache", ".pytest_cache")

COMPARISONS: dict[type[ast.cmpop], list[type[ast.cmpop]]] = {
    ast.Lt: [ast.LtE, ast.GtE], ast.LtE: [ast.Lt, ast.Gt], ast.Gt: [ast.GtE, ast.LtE],
    ast.GtE: [ast.Gt, ast.Lt], ast.Eq: [ast.NotEq], ast.NotEq: [ast.Eq],
    ast.In: [ast.NotIn], ast.NotIn: [ast.In], ast.Is: [ast.IsNot], ast.IsNot: [ast.Is],
}
ARITHMETIC: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div, ast.Mod: ast.Mult, ast.Pow: ast.Mult, ast.LShift: ast.RShift,
    ast.RShift: ast.LShift, ast.BitOr: ast.BitAnd, ast.BitAnd: ast.BitOr,
    ast.BitXor: ast.BitOr,
}
SYMBOL = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
          ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in", ast.Is: "is",
          ast.IsNot: "is not", ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/",
          ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**", ast.LShift: "<<",
          ast.RShift: ">>", ast.BitOr: "|", ast.BitAnd: "&", ast.BitXor: "^",
          ast.And: "and", ast.Or: "or"}

Change = Callable[[ast.AST], ast.AST | None]  # a node → its replacement (None: drop it)


@dataclass(frozen=True)
class Mutant:
    """One change: the node (by its index in ast.walk order) and what it becomes."""

    module: str
    index: int
    kind: str
    line: int
    function: str
    before: str
    after: str
    apply: Change

    nth: int = 1  # the same change read alike elsewhere in the function: 2, 3, … in walk order

    @property
    def key(self) -> str:
        """Stable across edits elsewhere in the file (no line number): the allow-list's key."""
        again = f" [{self.nth}]" if self.nth > 1 else ""
        return f"{self.module} {self.function}: {self.before} → {self.after}{again}"


def _short(node: ast.AST) -> str:
    text = ast.unparse(node).replace("\n", " ⏎ ")
    return text if len(text) <= 90 else text[:87] + "…"


def _shown(node: ast.AST, parent: ast.AST | None, apply: Change) -> tuple[str, str]:
    """The mutated node before and after, as source; a constant or a unary operator with
    the expression around it (`1 << 20 → 0 << 20`, not `1 → 0`), so the key says where."""
    result = apply(copy.deepcopy(node))
    if result is None:
        return _short(node), "pass"
    named = isinstance(parent, (ast.Assign, ast.AnnAssign, ast.AugAssign))  # `NAME = 2000`
    if parent is None or (isinstance(parent, ast.stmt) and not named) or not isinstance(
            node, (ast.Constant, ast.UnaryOp)):
        return _short(node), _short(result)
    around = copy.deepcopy(parent)
    changed = _Apply(around, _walk_index(parent, node), apply).visit(around)
    return _short(parent), _short(changed)


def _walk_index(tree: ast.AST, node: ast.AST) -> int:
    return next(i for i, n in enumerate(ast.walk(tree)) if n is node)


def _skipped(tree: ast.Module) -> set[int]:
    """ids of nodes never mutated: docstrings, annotations, `__future__` imports."""
    skip: set[int] = set()

    def mark(node: ast.AST | None) -> None:
        if node is not None:
            skip.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value,
                                                                     ast.Constant):
                mark(body[0])
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            mark(node.returns)
        if isinstance(node, ast.arg):
            mark(node.annotation)
        if isinstance(node, ast.AnnAssign):
            mark(node.annotation)
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            mark(node)
    return skip


def _functions(tree: ast.Module) -> dict[int, str]:
    """id(node) → the name of the function (or class) around it; `<module>` outside."""
    owner: dict[int, str] = {}

    def visit(node: ast.AST, name: str) -> None:
        owner[id(node)] = name
        inner = node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                               ast.ClassDef)) else name
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(tree, "<module>")
    return owner


def _with_op(new: type[ast.AST]) -> Change:
    def apply(node: ast.AST) -> ast.AST:
        changed = copy.copy(node)
        changed.op = new()  # type: ignore[attr-defined]
        return changed
    return apply


def _compare_at(at: int, new: type[ast.cmpop]) -> Change:
    def apply(node: ast.AST) -> ast.AST:
        assert isinstance(node, ast.Compare)
        changed = copy.copy(node)
        changed.ops = [new() if i == at else op for i, op in enumerate(node.ops)]
        return changed
    return apply


def _to_constant(value: bool | int | float) -> Change:
    def apply(node: ast.AST) -> ast.AST:
        return ast.Constant(value=value)
    return apply


def _operand(node: ast.AST) -> ast.AST:
    assert isinstance(node, ast.UnaryOp)
    return node.operand


def _return_none(node: ast.AST) -> ast.AST:
    return ast.Return(value=ast.Constant(value=None))


def _drop(node: ast.AST) -> None:
    return None


def _changes(node: ast.AST, in_function: bool) -> Iterator[tuple[str, Change]]:
    """The mutations of one node: (kind, how)."""
    if isinstance(node, ast.Compare):
        for at, op in enumerate(node.ops):
            for new in COMPARISONS.get(type(op), []):
                yield f"compare {SYMBOL[type(op)]} → {SYMBOL[new]}", _compare_at(at, new)
    elif isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in ARITHMETIC:
        new_op = ARITHMETIC[type(node.op)]
        yield f"arithmetic {SYMBOL[type(node.op)]} → {SYMBOL[new_op]}", _with_op(new_op)
    elif isinstance(node, ast.BoolOp):
        new_bool: type[ast.boolop] = ast.Or if isinstance(node.op, ast.And) else ast.And
        yield f"boolean {SYMBOL[type(node.op)]} → {SYMBOL[new_bool]}", _with_op(new_bool)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
        yield ("remove not" if isinstance(node.op, ast.Not) else "remove unary -"), _operand
    elif isinstance(node, ast.Constant) and isinstance(node.value, (bool, int, float)):
        value = node.value
        if isinstance(value, bool):
            yield f"constant {value} → {not value}", _to_constant(not value)
        else:
            new_value = type(value)(1 if value == 0 else 0 if value == 1 else value + 1)
            yield f"constant {value!r} → {new_value!r}", _to_constant(new_value)
    elif isinstance(node, ast.Return) and node.value is not None and not (
            isinstance(node.value, ast.Constant) and node.value.value is None):
        yield "return None", _return_none
    if in_function and isinstance(node, ast.stmt) and not isinstance(
            node, (ast.Return, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Pass,
                   ast.Global, ast.Nonlocal)):
        yield "drop statement", _drop


def mutants(module: str, source: str) -> list[Mutant]:
    """Every mutant of `source` (the file `module`), in ast.walk order."""
    tree = ast.parse(source)
    skip, owner = _skipped(tree), _functions(tree)
    parents = {id(child): node for node in ast.walk(tree)
               for child in ast.iter_child_nodes(node)}
    found: list[Mutant] = []
    for index, node in enumerate(ast.walk(tree)):
        if id(node) in skip:
            continue
        function = owner.get(id(node), "<module>")
        for kind, apply in _changes(node, function != "<module>" and not isinstance(
                node, (ast.FunctionDef, ast.AsyncFunctionDef))):
            before, after = _shown(node, parents.get(id(node)), apply)
            if after == before:  # e.g. a constant that prints alike: not a mutant
                continue
            seen = sum(m.function == function and (m.before, m.after) == (before, after)
                       for m in found)
            found.append(Mutant(module, index, kind, getattr(node, "lineno", 0), function,
                                before, after, apply, seen + 1))
    return found


class _Apply(ast.NodeTransformer):
    """Replaces the node at walk index `target` (a statement dropped becomes `pass`)."""

    def __init__(self, tree: ast.AST, target: int, apply: Change):
        self.node = next(n for i, n in enumerate(ast.walk(tree)) if i == target)
        self.apply = apply

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if node is self.node:
            replaced = self.apply(node)
            return ast.copy_location(ast.Pass() if replaced is None else replaced, node)
        return super().generic_visit(node)


def mutated_source(source: str, mutant: Mutant) -> str:
    tree = ast.parse(source)
    tree = _Apply(tree, mutant.index, mutant.apply).visit(tree)
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def load_allow_list(path: Path) -> dict[str, str]:
    """`key  # why: reason` per line (blank lines and `#` comments skipped)."""
    allowed: dict[str, str] = {}
    if not path.exists():
        return allowed
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        key, _, reason = line.partition("  # why: ")
        allowed[key.strip()] = reason.strip()
    return allowed


@dataclass
class Sandbox:
    """A throwaway copy of the repository in which one module at a time is mutated, and a
    worker in it that has pytest imported and forks one test run per mutant."""

    root: Path
    python: str
    worker: subprocess.Popen[str] | None = None

    @classmethod
    def create(cls, python: str) -> Sandbox:
        root = Path(tempfile.mkdtemp(prefix="benchrig-mutate-")) / "repo"
        shutil.copytree(ROOT, root, ignore=COPY_IGNORED, symlinks=True)
        for name in (".venv", ".agents"):  # shared, read-only for the tests
            if (ROOT / name).exists() and not (root / name).exists():
                (root / name).symlink_to((ROOT / name).resolve())
        return cls(root, python)

    def remove(self) -> None:
        self._stop()
        shutil.rmtree(self.root.parent, ignore_errors=True)

    def write(self, module: str, text: str) -> None:
        path = self.root / module
        path.write_text(text, encoding="utf-8")
        # a cached .pyc of the same size and second would be run instead of the mutant
        for cached in (path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"):
            cached.unlink()

    def _stop(self) -> None:
        if self.worker is not None:
            os.killpg(self.worker.pid, signal.SIGKILL)  # the worker's own group: its runs
            self.worker.wait()
            self.worker = None

    def run(self, tests: list[str], timeout: float) -> tuple[str, float]:
        """killed | survived | timeout, and the seconds the tests took."""
        if self.worker is None:
            env = {**os.environ, "PYTHONHASHSEED": "0"}
            self.worker = subprocess.Popen(
                [self.python, str(self.root / "bench" / "mutate.py"), "--serve"],
                cwd=self.root, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, text=True, start_new_session=True)
        assert self.worker.stdin is not None and self.worker.stdout is not None
        began = time.monotonic()
        # its own pytest temp folder: other pytest runs of this user prune the shared one
        own = ["--basetemp", str(self.root.parent / "pytest-tmp")]
        self.worker.stdin.write(json.dumps([*PYTEST, *own, *tests]) + "\n")
        self.worker.stdin.flush()
        ready, _, _ = select.select([self.worker.stdout], [], [], timeout)
        took = time.monotonic() - began
        if not ready:
            self._stop()  # a fresh worker for the next mutant
            return "timeout", took
        code = int(self.worker.stdout.readline() or "-1")
        if code == 5:
            raise SystemExit(f"no tests ran: {' '.join(tests)}")
        return ("survived" if code == 0 else "killed"), took


def serve() -> None:
    """The worker: pytest and the tests' third-party modules imported once (never BenchRig,
    which each run imports afresh, mutant included); one forked pytest run per request."""
    sys.path.insert(0, os.getcwd())
    import pytest

    for name in PRELOAD:
        with contextlib.suppress(ImportError):  # a module these tests do not need
            __import__(name)
    for line in sys.stdin:
        pid = os.fork()
        if pid == 0:
            log = os.open(LAST_RUN, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(log, 1)
            os.dup2(log, 2)
            try:
                code = int(pytest.main(json.loads(line)))
            except BaseException:  # a broken run is a killed mutant
                code = 3
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status), flush=True)


@dataclass
class Tally:
    mutants: int = 0
    killed: int = 0
    survived: int = 0
    timeout: int = 0
    equivalent: int = 0
    seconds: float = 0.0

    @property
    def score(self) -> float:
        decided = self.mutants - self.equivalent
        return (self.killed + self.timeout) / decided if decided else 1.0


def run_module(sandbox: Sandbox, module: str, tests: list[str], chosen: list[Mutant],
               timeout: float | None, allowed: dict[str, str],
               survivors: list[tuple[Mutant, str | None]]) -> Tally:
    original = (ROOT / module).read_text(encoding="utf-8")
    tally = Tally()
    # the unmutated module, as unparsed, must pass: else every mutant would look killed
    sandbox.write(module, ast.unparse(ast.parse(original)) + "\n")
    verdict, baseline = sandbox.run(tests, timeout or 600)
    if verdict != "survived":
        output = (sandbox.root / LAST_RUN).read_text(encoding="utf-8", errors="replace")
        raise SystemExit(f"{module}: the tests fail without a mutant ({verdict}):\n"
                         f"{output[-3000:]}")
    limit = timeout or max(30.0, 4 * baseline)
    print(f"{module}: {len(chosen)} mutants, tests {' '.join(tests)} "
          f"(baseline {baseline:.1f} s, timeout {limit:.0f} s)", file=sys.stderr)
    began = time.monotonic()
    for number, mutant in enumerate(chosen, 1):
        sandbox.write(module, mutated_source(original, mutant))
        verdict, _ = sandbox.run(tests, limit)
        tally.mutants += 1
        if verdict == "survived" and mutant.key in allowed:
            tally.equivalent += 1
            survivors.append((mutant, allowed[mutant.key]))
        else:
            setattr(tally, verdict, getattr(tally, verdict) + 1)
            if verdict == "survived":
                survivors.append((mutant, None))
            elif mutant.key in allowed:  # the allow-list is wrong about it: say so
                print(f"  allow-listed but {verdict}: {mutant.key}", file=sys.stderr)
        print(f"  [{number}/{len(chosen)}] {verdict:8} {module}:{mutant.line} {mutant.kind}",
              file=sys.stderr)
    sandbox.write(module, original)
    tally.seconds = time.monotonic() - began
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", action="append", help="a module (path); repeatable; "
                        "default: every module of MAPPED")
    parser.add_argument("--tests", nargs="+", help="the test files to run (default: the "
                        "module's in MAPPED)")
    parser.add_argument("--max", type=int, default=0, help="at most N mutants per module, "
                        "drawn at random (--seed); 0: all")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, help="seconds per mutant's test run "
                        "(default: 4 × the unmutated run, at least 30)")
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return
    modules = args.module or list(MAPPED)
    allowed = load_allow_list(ALLOW_LIST)
    plans = []
    for module in modules:
        found = mutants(module, (ROOT / module).read_text(encoding="utf-8"))
        if args.max and len(found) > args.max:
            picked = sorted(random.Random(args.seed).sample(range(len(found)), args.max))
            found = [found[i] for i in picked]
        plans.append((module, args.tests or MAPPED.get(module, []), found))
    if args.list:
        for module, _, found in plans:
            for m in found:
                print(f"{module}:{m.line}  {m.kind:24} {m.key}")
        return
    sandbox = Sandbox.create(args.python)
    survivors: list[tuple[Mutant, str | None]] = []
    tallies = {}
    try:
        for module, tests, found in plans:
            if not tests:
                raise SystemExit(f"{module}: no test files mapped; pass --tests")
            if missing := [t for t in tests if not (ROOT / t).exists()]:
                raise SystemExit(f"{module}: no such test file: {', '.join(missing)}")
            tallies[module] = run_module(sandbox, module, tests, found, args.timeout,
                                         allowed, survivors)
    finally:
        sandbox.remove()
    print(f"{'module':32} {'mutants':>7} {'killed':>6} {'timeout':>7} {'survived':>8} "
          f"{'equiv.':>6} {'score':>6} {'time':>7}")
    total = Tally()
    for module, t in tallies.items():
        print(f"{module:32} {t.mutants:7} {t.killed:6} {t.timeout:7} {t.survived:8} "
              f"{t.equivalent:6} {t.score:6.1%} {t.seconds:6.0f}s")
        for field in ("mutants", "killed", "survived", "timeout", "equivalent", "seconds"):
            setattr(total, field, getattr(total, field) + getattr(t, field))
    print(f"{'total':32} {total.mutants:7} {total.killed:6} {total.timeout:7} "
          f"{total.survived:8} {total.equivalent:6} {total.score:6.1%} {total.seconds:6.0f}s")
    alive = [(m, why) for m, why in survivors if why is None]
    if alive:
        print("\nsurviving mutants:")
        for m, _ in alive:
            print(f"  {m.module}:{m.line}  {m.kind}: {m.key}")
    equivalent = [(m, why) for m, why in survivors if why is not None]
    if equivalent:
        print("\nequivalent (bench/mutate_equivalent.txt):")
        for m, why in equivalent:
            print(f"  {m.module}:{m.line}  {m.key}  — {why}")


if __name__ == "__main__":
    main()
