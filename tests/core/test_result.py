"""Result files: the published example validates; writes are atomic; bad files are named."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from benchrig.core.errors import ResultError
from benchrig.resultio.files import (
    load_results,
    result_path,
    result_text,
    safe_name,
    validate,
    write_atomic,
)
from tests.conftest import ROOT, cli_call

EXAMPLE = json.loads((ROOT / "results" / "EXAMPLE.json").read_text())


def write_result(directory: Path, result: dict[str, Any]) -> Path:
    """Validate `result`, then write it atomically where the runner would (its own steps)."""
    validate(result)
    path = result_path(directory, result)
    write_atomic(path, result_text(result))
    return path


def test_example_json_validates_and_keeps_the_benchmark_runner_keys() -> None:
    validate(EXAMPLE)
    for key in ("task", "model", "agent", "started_at", "ended_at", "run_id", "metrics",
                "result", "pass_at_1", "notes"):
        assert key in EXAMPLE
    for key in ("wall_s", "ttft_ms", "tokens_per_s", "input_tokens", "output_tokens",
                "cost_usd"):
        assert key in EXAMPLE["metrics"]


def strings(value: object) -> list[str]:
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return [value] if isinstance(value, str) else []


def test_example_json_is_a_clean_pass_with_no_path_of_the_machine_it_ran_on() -> None:
    assert EXAMPLE["result"] == "pass" and EXAMPLE["error"] is None
    assert EXAMPLE["checks"]["passed"] == EXAMPLE["checks"]["total"] > 0
    machine = (str(ROOT), str(Path.home()), "/tmp/", "/work/", "/root/", "/home/")
    # the system programs the sandbox ran (/usr/bin/…) are where every Linux keeps them
    found = [s for s in strings(EXAMPLE) if any(m in s for m in machine)]
    assert found == []


@pytest.mark.parametrize(("path", "value"), [
    (("result",), "passed"), (("metrics", "ttft_ms"), -1), (("run_id",), "xyz"),
    (("error",), {"kind": "oops", "message": "x"}), (("metrics", "input_tokens"), 1.5),
])
def test_invalid_results_are_refused(path: tuple[str, ...], value: object) -> None:
    bad = copy.deepcopy(EXAMPLE)
    target = bad
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(ResultError):
        validate(bad)


def test_write_result_names_the_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    written = write_result(tmp_path, EXAMPLE)
    assert written == result_path(tmp_path, EXAMPLE)
    assert written.name.startswith(EXAMPLE["started_at"][:10] + "-oracle-lru-cache-")
    assert json.loads(written.read_text()) == EXAMPLE
    assert [p.name for p in tmp_path.iterdir()] == [written.name]


def test_invalid_result_is_never_written(tmp_path: Path) -> None:
    bad = {**EXAMPLE, "result": "maybe"}
    with pytest.raises(ResultError):
        write_result(tmp_path, bad)
    assert list(tmp_path.iterdir()) == []


def test_model_names_become_safe_file_names() -> None:
    assert safe_name("qwen2.5-coder:7b") == "qwen2.5-coder-7b"
    assert safe_name("/models/My Model.Q4.gguf") == "My-Model.Q4"
    assert safe_name("../../etc") == "etc"


def test_loading_skips_example_and_names_invalid_files(tmp_path: Path) -> None:
    write_result(tmp_path, EXAMPLE)
    (tmp_path / "EXAMPLE.json").write_text(json.dumps(EXAMPLE))
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "wrong.json").write_text(json.dumps({**EXAMPLE, "result": "great"}))
    loaded = load_results([tmp_path])
    assert len(loaded.results) == 1
    # named explicitly, as a shell glob does (results/*.json), it is still not a run
    assert load_results(sorted(tmp_path.glob("*.json"))).results == loaded.results
    assert sorted(p.name for p, _ in loaded.rejected) == ["broken.json", "wrong.json"]


def test_summary_reports_invalid_files_by_name_and_tabulates_the_rest(results_dir: Path
                                                                      ) -> None:
    write_result(results_dir, EXAMPLE)
    (results_dir / "junk.json").write_text("[]")
    ran = cli_call("summary", results_dir=results_dir)
    assert ran.code == 0
    assert "junk.json: skipped, not a valid result" in ran.stderr
    assert "oracle" in ran.stdout and "junk" not in ran.stdout
