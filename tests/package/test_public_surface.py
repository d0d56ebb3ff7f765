"""The public surface, in the style of httpx's exported-members test: each public module's
`__all__` is exactly what docs/architecture.md says is public, resolves, and is all a pure
re-export package offers; every module is named public or private there; and the plugin pages
import only public names."""

from __future__ import annotations

import importlib
import re
import types
from pathlib import Path

import pytest

from tests.conftest import ROOT

DOCS = ROOT / "docs"


def _section() -> str:
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    return text.split("## Public surface for plugins", 1)[1].split("\n## ", 1)[0]


def documented() -> dict[str, list[str]]:
    """The table of public modules and names in docs/architecture.md."""
    rows = re.findall(r"^\| `(benchrig[\w.]*)` \| (.+) \|$", _section(), re.M)
    table = {module: re.findall(r"`(\w+)`", names.split(" (", 1)[0]) for module, names in rows}
    assert table, "docs/architecture.md has no table of the public surface"
    return table


@pytest.mark.parametrize("module", sorted(documented()))
def test_all_is_exactly_what_the_docs_say_is_public(module: str) -> None:
    loaded = importlib.import_module(module)
    exported = getattr(loaded, "__all__", None)
    assert exported is not None, f"{module} has no __all__"
    assert sorted(exported) == sorted(documented()[module])
    missing = [name for name in exported if not hasattr(loaded, name)]
    assert not missing, f"{module}.__all__ names what it does not define: {missing}"


def test_benchrig_core_offers_nothing_beyond_its_all() -> None:
    """As httpx's test: every public member of the re-export package is in `__all__` (its
    submodules aside, which are private)."""
    core = importlib.import_module("benchrig.core")
    members = {name for name, value in vars(core).items()
               if not name.startswith("_") and not isinstance(value, types.ModuleType)
               and name != "annotations"}
    assert members == set(core.__all__)


def _modules() -> set[str]:
    """benchrig's top-level modules and packages, from the files (importing them all would
    load the optional heavy dependencies)."""
    package = ROOT / "benchrig"
    found = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    found |= {p.parent.name for p in package.glob("*/__init__.py")}
    return {f"benchrig.{name}" for name in found}


def test_every_module_is_named_public_or_private_in_the_docs() -> None:
    section = _section()
    listed = section.split("Private,", 1)[1].split("— and,", 1)[0]
    private = set(re.findall(r"`(benchrig\.\w+)`", listed))
    public = {module.split(".")[0] + "." + module.split(".")[1] for module in documented()}
    unnamed = sorted(_modules() - private - public)
    assert not unnamed, f"docs/architecture.md names these neither public nor private: {unnamed}"
    assert not private & set(documented()), "a module both public and private"


PAGES = ["writing-a-driver.md", "writing-a-check.md", "writing-a-suite.md", "agents.md"]


def _imports(page: Path) -> list[tuple[str, list[str]]]:
    text = page.read_text(encoding="utf-8")
    found = re.findall(r"^from (benchrig[\w.]*) import (?:\(([\w, \n]+)\)|([\w, ]+)$)", text,
                       re.M)
    found = [(module, grouped or single) for module, grouped, single in found]
    return [(module, [n.strip() for n in names.replace("\n", " ").split(",") if n.strip()])
            for module, names in found]


@pytest.mark.parametrize("page", PAGES)
def test_the_plugin_pages_import_only_public_names(page: str) -> None:
    table = documented()
    imports = _imports(DOCS / page)
    assert imports or page == "agents.md"
    wrong = [f"{module}.{name}" for module, names in imports for name in names
             if name not in table.get(module, [])]
    assert not wrong, f"docs/{page} imports what is private: {wrong}"
    # and its own table of what to import, where it has one
    rows = re.findall(r"^\| `(benchrig[\w.]*)` \| (.+) \|$", (DOCS / page).read_text(
        encoding="utf-8"), re.M)
    named = [f"{module}.{name}" for module, cell in rows
             for name in re.findall(r"`(\w+)(?:\(\))?`", cell)
             if name not in table.get(module, [])]
    assert not named, f"docs/{page} calls public what is not: {named}"
