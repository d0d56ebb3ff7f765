"""The test suite's own rules on waiting: a test waits for what it is about, never for a poll
or a timer it does not test (docs/security.md, "A test waits for an event, not a clock")."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

# the helper that runs them, and this file, which names the call it looks for
EXEMPT = {ROOT / "tests" / "helpers" / "serving.py", Path(__file__).resolve()}
# A server sees a stop request within this: serve_forever's own default is 0.5 s.
STOP_SEEN_S = 0.05


def test_every_test_server_is_run_by_the_helper_that_stops_it_at_once() -> None:
    """`serve_forever` polls for a stop every 0.5 s unless told otherwise: a server a test
    stood up that way cost the test about half a second at its end (~0.5 s of each of
    hundreds of tests). `tests/helpers/serving.running` is the one place that runs one."""
    found = [path.relative_to(ROOT).as_posix()
             for path in sorted((ROOT / "tests").rglob("*.py"))
             if path not in EXEMPT and re.search(r"\.serve_forever\b", path.read_text("utf-8"))]
    assert not found, f"run a server without tests.helpers.serving.running: {found}"


def test_every_server_sees_a_stop_within_50_ms() -> None:
    """BenchRig's own servers (the gateway, `benchrig view`) and the tests' helper each tell
    serve_forever how often to look for a stop: the gateway's 0.2 s was waited out at the end
    of each of ~90 gateway tests, and by every run and `benchrig serve` at their exit."""
    slow: list[str] = []
    for path in sorted([*(ROOT / "benchrig").rglob("*.py"), *(ROOT / "tests").rglob("*.py")]):
        if path == Path(__file__).resolve() or "serve_forever" not in path.read_text("utf-8"):
            continue
        for line, poll in _stop_polls(ast.parse(path.read_text("utf-8"))):
            if poll is None or poll > STOP_SEEN_S:
                slow.append(f"{path.relative_to(ROOT)}:{line}: poll_interval {poll}")
    assert not slow, "a server that sees a stop late (None: serve_forever's 0.5 s):\n" + \
        "\n".join(slow)


def _stop_polls(tree: ast.Module) -> list[tuple[int, float | None]]:
    """(line, poll_interval) of every use of serve_forever: called, or a thread's target
    with its keyword arguments; None where no interval a number can be read from is given."""
    constants = {target.id: node.value.value for node in tree.body
                 if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                 for target in node.targets if isinstance(target, ast.Name)}

    def number(node: ast.expr | None) -> float | None:
        value = (node.value if isinstance(node, ast.Constant)
                 else constants.get(node.id) if isinstance(node, ast.Name) else None)
        return float(value) if isinstance(value, int | float) else None

    def keyword(call: ast.Call, name: str) -> ast.expr | None:
        return next((k.value for k in call.keywords if k.arg == name), None)

    found: list[tuple[int, float | None]] = []
    uses = {id(node) for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr == "serve_forever"}
    for call in (node for node in ast.walk(tree) if isinstance(node, ast.Call)):
        if id(call.func) in uses:  # server.serve_forever(poll_interval=…)
            uses.discard(id(call.func))
            found.append((call.lineno, number(keyword(call, "poll_interval")
                                              or (call.args[0] if call.args else None))))
        elif id(target := keyword(call, "target")) in uses:  # Thread(target=…, kwargs={…})
            uses.discard(id(target))
            given = keyword(call, "kwargs")
            pairs = (dict(zip(given.keys, given.values, strict=True))
                     if isinstance(given, ast.Dict) else {})
            found.append((call.lineno, next(
                (number(v) for k, v in pairs.items()
                 if isinstance(k, ast.Constant) and k.value == "poll_interval"), None)))
    return found + [(0, None)] * len(uses)  # used some other way: not read here


# What a test module must not load when it is imported: collection runs in every xdist
# worker, so each pays for it, though one worker runs the tests that need it.
HEAVY_AT_COLLECTION = ("llama_cpp",)


def test_no_test_module_loads_llama_cpp_at_collection() -> None:
    """llama_cpp (its shared library) cost each worker ~0.25 s at collection for the two
    modules that skipped without it (pytest.importorskip at module level); they now skip on
    `importlib.util.find_spec`, and whatever needs the module imports it in the test."""
    found = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        text = path.read_text("utf-8")
        if path == Path(__file__).resolve() or not any(n in text for n in HEAVY_AT_COLLECTION):
            continue
        found += [f"{path.relative_to(ROOT)}:{line}" for line in loaded_at_import(text)]
    assert not found, f"load {HEAVY_AT_COLLECTION} when imported: {found}"


@pytest.mark.parametrize("source", [
    "import llama_cpp",
    "import llama_cpp.llama as llama",
    "from llama_cpp import Llama",
    "import pytest\npytest.importorskip('llama_cpp')",
    "import pytest as pt\npt.importorskip(modname='llama_cpp')",
    "from pytest import importorskip\nimportorskip('llama_cpp')",
    "from pytest import importorskip as needs\nLLAMA = needs('llama_cpp')",
    "__import__('llama_cpp')",
    "import builtins\nbuiltins.__import__('llama_cpp.llama')",
    "import importlib\nimportlib.import_module('llama_cpp')",
    "from importlib import import_module\nimport_module(name='llama_cpp')",
    "if True:\n    import llama_cpp",
    "class Holder:\n    llama = __import__('llama_cpp')",
    "import pytest\n@pytest.mark.skipif(not __import__('llama_cpp'), reason='')\n"
    "def test_x() -> None: ...",
    "def test_x(llama: object = __import__('llama_cpp')) -> None: ...",
])
def test_the_guard_sees_every_way_to_load_a_module(source: str) -> None:
    assert loaded_at_import(source)


@pytest.mark.parametrize("source", [
    "def test_x() -> None:\n    import llama_cpp",
    "def test_x() -> None:\n    __import__('llama_cpp')",
    "from pytest import importorskip\ndef test_x() -> None:\n    importorskip('llama_cpp')",
    "import importlib.util\nFOUND = importlib.util.find_spec('llama_cpp')",
    "LOADER = lambda: __import__('llama_cpp')",
    "import pytest\npytest.importorskip('llama_cpp_python_docs')",
])
def test_the_guard_lets_a_test_load_it_when_it_runs(source: str) -> None:
    assert not loaded_at_import(source)


def loaded_at_import(source: str) -> list[int]:
    """The lines of `source` that load a module of HEAVY_AT_COLLECTION when it is imported."""
    tree = ast.parse(source)
    loaders = _loader_names(tree)
    return [statement.lineno for statement in tree.body
            if any(_loads(node, name, loaders) for node in _outside_functions(statement)
                   for name in HEAVY_AT_COLLECTION)]


# The calls that import the module they name, and the keyword that may name it instead.
LOADERS = {"importorskip": "modname", "import_module": "name", "__import__": "name"}


def _loader_names(tree: ast.Module) -> dict[str, str]:
    """Each bare name that calls a loader: `__import__` (a builtin), and whatever a
    `from … import importorskip [as …]` or `from importlib import import_module` binds."""
    names = {"__import__": "__import__"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names.update((alias.asname or alias.name, alias.name) for alias in node.names
                         if alias.name in LOADERS)
    return names


def _outside_functions(node: ast.AST) -> list[ast.AST]:
    """`node` and what it holds that runs when the module is imported: of a function, its
    decorators and default values, never its body (run by a test)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        run = [*getattr(node, "decorator_list", []), *node.args.defaults,
               *(default for default in node.args.kw_defaults if default is not None)]
        return [inner for part in run for inner in _outside_functions(part)]
    return [node, *(inner for child in ast.iter_child_nodes(node)
                    for inner in _outside_functions(child))]


def _loads(node: ast.AST, name: str, loaders: dict[str, str]) -> bool:
    if isinstance(node, ast.Import):
        return any(alias.name.split(".")[0] == name for alias in node.names)
    if isinstance(node, ast.ImportFrom):
        return (node.module or "").split(".")[0] == name
    if not isinstance(node, ast.Call):
        return False
    func = node.func  # pytest.importorskip(…), importlib.import_module(…), or a bare name
    loader = (func.attr if isinstance(func, ast.Attribute)
              else loaders.get(func.id) if isinstance(func, ast.Name) else None)
    if loader not in LOADERS:
        return False
    named = node.args[0] if node.args else next(
        (k.value for k in node.keywords if k.arg == LOADERS[loader]), None)
    return (isinstance(named, ast.Constant) and isinstance(named.value, str)
            and named.value.split(".")[0] == name)
