"""Whether the compiled schema validator and jsonschema (the reference) agree on a document."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchrig.schemas import accepts, problems, reference_problems


def disagreement(name: str, document: Any) -> str | None:
    """Why the two validators of schema/<name> disagree on `document`, or None when they agree
    (and `problems` gives jsonschema's own verdict)."""
    reference = reference_problems(name, document)
    compiled = accepts(name, document)
    if compiled != (not reference):
        return (f"compiled validator says {'valid' if compiled else 'invalid'}, jsonschema "
                f"says {reference or 'valid'}")
    if problems(name, document) != reference:
        return f"problems() gave {problems(name, document)}, jsonschema {reference}"
    return None


def result_files(folder: Path) -> list[tuple[Path, Any]]:
    """Every JSON file under `folder` that looks like a result (an object with a
    schema_version or a run_id), with its content."""
    found = []
    for path in sorted(folder.rglob("*.json")):
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            continue
        if isinstance(document, dict) and ("schema_version" in document or "run_id" in document):
            found.append((path, document))
    return found
