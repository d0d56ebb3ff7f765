"""The compiled schema validator agrees with jsonschema: on every fixture, on every variant of
them one field wrong, and on generated documents; where it is stricter, jsonschema decides.

(Every result file a test writes is also checked, by the autouse fixture in conftest.py.)
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchrig.resultio.files import load_results
from benchrig.schemas import accepts, problems, reference_problems
from benchrig.spec import load_task
from tests.conftest import ROOT, TASKS
from tests.helpers import scorecard_fixture
from tests.helpers.schema_agreement import disagreement

EXAMPLE = json.loads((ROOT / "tests" / "fixtures" / "result-template.json").read_text())
TASK_META = {path.stem: dict(load_task(path).frontmatter) for path in sorted(TASKS.glob("*.md"))}
# What a field may wrongly hold: every JSON type, edges of the numeric and string rules.
WRONG: list[Any] = [None, True, False, 0, 1, -1, 1.0, 1.5, -0.5, 2**64, -(2**64), 1e300, "",
                    "x", "pass", "😀" * 401, [], ["x"], [1], {}, {"x": 1}]


def paths(document: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key and index path in `document`, parents before children."""
    items = (document.items() if isinstance(document, dict)
             else enumerate(document) if isinstance(document, list) else ())
    for key, value in items:
        yield (*prefix, key)
        yield from paths(value, (*prefix, key))


def replaced(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    changed = copy.deepcopy(document)
    parent = changed
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return changed


def variants(document: dict[str, Any]) -> Iterator[Any]:
    """`document` with one thing wrong, each way: every field given every WRONG value,
    removed, or joined by an unknown sibling."""
    for path in paths(document):
        for value in WRONG:
            yield replaced(document, path, value)
        parent = replaced(document, path, None)
        for key in path[:-1]:
            parent = parent[key]
        if isinstance(parent, dict):
            del parent[path[-1]]
            yield replaced(document, path[:-1], parent) if path[:-1] else parent
    for path in [(), *paths(document)]:
        target = copy.deepcopy(document)
        inner = target
        for key in path:
            inner = inner[key]
        if isinstance(inner, dict):
            inner["unknown_field"] = 1
            yield target


def fixtures() -> list[tuple[str, str, Any]]:
    found = [("result", "EXAMPLE.json", EXAMPLE)]
    found += [("result", f"scorecard fixture {i}", r)
              for i, r in enumerate(scorecard_fixture.build())]
    found += [("task", f"tasks/{stem}.md", meta) for stem, meta in TASK_META.items()]
    return found


@pytest.mark.parametrize(("name", "label", "document"), fixtures(),
                         ids=[label for _, label, _ in fixtures()])
def test_both_validators_accept_every_fixture(name: str, label: str, document: Any) -> None:
    assert accepts(name, document), label
    assert reference_problems(name, document) == []


@pytest.mark.parametrize(("name", "document"),
                         [("result", EXAMPLE), ("task", TASK_META["lru-cache"]),
                          ("task", TASK_META["polish-declension"]),
                          ("task", TASK_META["mislabeled-boxes"])],
                         ids=["result", "coding task", "declension task", "regex task"])
def test_both_validators_agree_on_every_variant_with_one_thing_wrong(name: str,
                                                                     document: Any) -> None:
    checked = 0
    for variant in variants(document):
        assert disagreement(name, variant) is None, json.dumps(variant)[:2000]
        checked += 1
    assert checked > len(WRONG) * len(list(paths(document)))


# Values where the compiled validator (ECMA-262 patterns, strict JSON numbers) is stricter
# than jsonschema: it refuses them, jsonschema accepts them, and jsonschema's verdict stands.
STRICTER = [
    (("run_id",), "56e3364fdeaa\n"),  # Python's `$` matches before a final newline
    (("started_at",), "2026-11-30T17:01:55Z\n"),
    (("started_at",), "٢٠٢٦-11-30T17:01:55Z"),  # Python's \d takes any decimal digit
    (("metrics", "wall_s"), float("nan")),  # a NaN is no number below the minimum
    (("metrics", "wall_s"), float("inf")),
]


@pytest.mark.parametrize(("path", "value"), STRICTER, ids=[repr(v) for _, v in STRICTER])
def test_where_the_compiled_validator_is_stricter_jsonschema_decides(
        path: tuple[str, ...], value: Any) -> None:
    document = replaced(EXAMPLE, path, value)
    assert not accepts("result", document)
    assert reference_problems("result", document) == []
    assert problems("result", document) == []


def test_a_value_json_has_no_type_for_goes_to_jsonschema() -> None:
    """A date or a set (YAML can make them) is refused with jsonschema's words."""
    document = {**TASK_META["bat-and-ball"], "title": {1, 2}}
    assert not accepts("task", document)
    assert problems("task", document) == ["title: {1, 2} is not of type 'string'"]


def test_an_invalid_result_file_is_named_with_a_readable_reason(tmp_path: Any) -> None:
    bad = replaced(EXAMPLE, ("metrics", "wall_s"), -1)
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    loaded = load_results([tmp_path])
    assert loaded.rejected == [(tmp_path / "bad.json",
                                "metrics.wall_s: -1 is less than the minimum of 0")]


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                    | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=8)
RESULT_PATHS = list(paths(EXAMPLE))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(RESULT_PATHS), JSON)
def test_the_compiled_validator_never_accepts_what_jsonschema_refuses(
        path: tuple[Any, ...], value: Any) -> None:
    document = replaced(EXAMPLE, path, value)
    reference = reference_problems("result", document)
    if accepts("result", document):
        assert reference == []
    assert problems("result", document) == reference
