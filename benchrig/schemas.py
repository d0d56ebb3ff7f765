"""Validates documents against the published JSON Schemas, and says what is wrong as `field: …`.

Two validators of the same schema file: a compiled one (jsonschema-rs, about 10 µs a result
file) decides that a document is valid; anything it does not accept goes to the reference,
`jsonschema`, which decides in its turn and words the problems. So a document is valid
exactly when jsonschema says it is, provided the compiled validator accepts nothing that
jsonschema refuses: tests/test_schemas.py runs both over every fixture, every result file
the tests write and a battery of hand-made invalid variants. Where they differ the
compiled one is the stricter (ECMA-262 patterns: `$` before a final newline and `\\d` on
non-ASCII digits; NaN and infinities), and jsonschema's verdict stands. jsonschema is only
imported when a document fails the compiled check.
"""

from __future__ import annotations

import json
from functools import cache
from typing import TYPE_CHECKING, Any

import jsonschema_rs

from benchrig.core.errors import BenchRigError
from benchrig.paths import SCHEMA_DIR

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError


@cache
def schema(name: str) -> dict[str, Any]:
    """schema/<name>.schema.json (package data: benchrig/data/schema/) as loaded."""
    path = SCHEMA_DIR / f"{name}.schema.json"
    if not path.is_file():
        raise BenchRigError(f"{path} not found: this BenchRig installation is incomplete "
                            "(reinstall it; a wheel carries benchrig/data/schema/)")
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


@cache
def compiled(name: str) -> jsonschema_rs.Validator:
    """The compiled validator (the schema is checked against its metaschema as it is built)."""
    return jsonschema_rs.Draft202012Validator(schema(name))


@cache
def validator(name: str) -> Draft202012Validator:
    """The reference validator, jsonschema's (checked once against the metaschema)."""
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(schema(name))
    return Draft202012Validator(schema(name))


def accepts(name: str, document: Any) -> bool:
    """Whether the compiled validator finds `document` valid; False for a value JSON has no
    type for (a date read from YAML, a set), which it cannot look at."""
    try:
        return compiled(name).is_valid(document)
    except ValueError:
        return False


def _messages(error: ValidationError) -> list[str]:
    where = [str(p) for p in error.absolute_path]
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else "?"
        return [f"{'.'.join([*where, missing])}: required field is missing"]
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = error.schema.get("properties", {})
        return [f"{'.'.join([*where, str(key)])}: unknown field"
                for key in error.instance if key not in allowed]
    return [f"{'.'.join(where) or '(top level)'}: {error.message}"]


def reference_problems(name: str, document: Any) -> list[str]:
    """jsonschema's verdict on `document`: every violation as `field: message`, in a stable
    order."""
    errors = sorted(validator(name).iter_errors(document),
                    key=lambda e: [str(p) for p in e.absolute_path])
    return [message for error in errors for message in _messages(error)]


def problems(name: str, document: Any) -> list[str]:
    """Every schema violation of `document` as `field: message`, in a stable order."""
    if accepts(name, document):
        return []
    return reference_problems(name, document)
