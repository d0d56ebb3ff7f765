"""Loads the published JSON Schemas and turns their errors into `field: what is wrong`."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from benchrig.core.errors import BenchRigError
from benchrig.paths import SCHEMA_DIR


@cache
def validator(name: str) -> Draft202012Validator:
    """The validator for schema/<name>.schema.json (checked once against the metaschema)."""
    path = SCHEMA_DIR / f"{name}.schema.json"
    if not path.is_file():
        raise BenchRigError(f"{path} not found: BenchRig runs from its source checkout "
                            "(`make install` there installs it in editable mode)")
    schema = json.loads(path.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


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


def problems(name: str, document: Any) -> list[str]:
    """Every schema violation of `document` as `field: message`, in a stable order."""
    errors = sorted(validator(name).iter_errors(document),
                    key=lambda e: [str(p) for p in e.absolute_path])
    return [message for error in errors for message in _messages(error)]
