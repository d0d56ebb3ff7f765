"""The bundled tool cases, their oracle transcripts (replay files) and the near misses each
must fail with, written from the case files by code of its own (not by the checker)."""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchrig.spec import load_task
from tests.conftest import TASKS

CASES = sorted(p.name.removesuffix(".md") for p in TASKS.glob("tool-*.md"))
# A plain answer that matches each no-call turn (case id → turn index → text).
ANSWERS = {
    "tool-nocall-arithmetic": {0: "12 multiplied by 7 is 84."},
    "tool-nocall-capital": {0: "The capital of Poland is Warsaw (Warszawa)."},
    "tool-nocall-translate": {0: "In Spanish you say \"gracias\"."},
    "tool-polish-nocall": {0: "9 razy 8 to 72."},
    "tool-twostep-weather-answer": {1: "Yes, it is snowing in Oslo right now (-3 °C)."},
}
REFUSAL = "I'm sorry, but I can't help with that request."


def meta(case: str) -> dict[str, Any]:
    """The case's frontmatter, a copy of its own for each caller (the cases are read and
    checked once per process: the near misses alone read each one four times)."""
    return copy.deepcopy(_frontmatter(case))


@functools.cache
def _frontmatter(case: str) -> dict[str, Any]:
    return dict(load_task(TASKS / f"{case}.md").frontmatter)


def call_json(name: str, arguments: Any, text: bool = True) -> dict[str, Any]:
    """A call as an OpenAI server returns it (arguments as JSON text)."""
    return {"name": name, "arguments": json.dumps(arguments) if text else arguments}


def oracle(case: str) -> dict[str, Any]:
    """The replay transcript that does exactly what the case plans."""
    turns = []
    for index, turn in enumerate(meta(case)["turns"]):
        if "call" in turn:
            call = turn["call"]
            turns.append({"text": "", "tool_calls": [call_json(call["name"],
                                                               call["arguments"])]})
        else:
            turns.append({"text": ANSWERS[case][index]})
    return {"turns": turns}


def _schema(m: dict[str, Any], tool: str) -> dict[str, Any]:
    found: dict[str, Any] = next(t["function"]["parameters"] for t in m["tools"]
                                 if t["function"]["name"] == tool)
    return found


def near_misses(case: str) -> Iterator[tuple[str, dict[str, Any], str]]:
    """(name, replay transcript, words the failing reason must hold) for each way to miss."""
    m, good = meta(case), oracle(case)
    for index, turn in enumerate(m["turns"]):
        def variant(reply: dict[str, Any], index: int = index) -> dict[str, Any]:
            changed = copy.deepcopy(good)
            changed["turns"][index] = reply
            return changed

        tag = f"turn{index + 1}"
        if "call" not in turn:
            yield f"{tag}-refusal", variant({"text": REFUSAL}), "does not match"
            other = m["tools"][0]["function"]
            yield f"{tag}-false-call", variant({"text": "", "tool_calls": [call_json(
                other["name"], {})]}), "where a plain answer is expected"
            continue
        name, args = turn["call"]["name"], turn["call"]["arguments"]
        schema = _schema(m, name)
        others = [t["function"]["name"] for t in m["tools"] if t["function"]["name"] != name]
        yield f"{tag}-wrong-tool", variant({"text": "", "tool_calls": [
            call_json(others[0], args)]}), f"called {others[0]!r}"
        yield f"{tag}-extra-argument", variant({"text": "", "tool_calls": [
            call_json(name, {**args, "verbose": True})]}), "verbose"
        for key in schema.get("required", []):
            yield f"{tag}-missing-{key}", variant({"text": "", "tool_calls": [
                call_json(name, {k: v for k, v in args.items() if k != key})]}), key
        for key, value in args.items():
            if isinstance(value, int) and not isinstance(value, bool):
                yield f"{tag}-{key}-as-string", variant({"text": "", "tool_calls": [
                    call_json(name, {**args, key: str(value)})]}), key
                yield f"{tag}-{key}-as-float", variant({"text": "", "tool_calls": [
                    call_json(name, {**args, key: float(value)})]}), key
            if isinstance(value, list) and len(set(map(str, value))) > 1:
                yield f"{tag}-{key}-swapped", variant({"text": "", "tool_calls": [
                    call_json(name, {**args, key: list(reversed(value))})]}), key
            if isinstance(value, str):
                yield f"{tag}-{key}-changed", variant({"text": "", "tool_calls": [
                    call_json(name, {**args, key: value.upper() + "x"})]}), key
        yield f"{tag}-plain-text-json", variant({"text": json.dumps(
            {"name": name, "arguments": args})}), "as text"
        yield f"{tag}-extra-call", variant({"text": "", "tool_calls": [
            call_json(name, args), call_json(name, args)]}), "extra call"
        yield f"{tag}-malformed", variant({"text": "", "tool_calls": [
            {"name": name, "arguments": json.dumps(args)[:-1]}]}), "malformed"
        yield f"{tag}-no-call", variant({"text": "I would call a tool here."}), "no tool call"


def all_near_misses() -> list[tuple[str, str, dict[str, Any], str]]:
    return [(case, name, transcript, words) for case in CASES
            for name, transcript, words in near_misses(case)]


def write(path: Path, transcript: dict[str, Any]) -> Path:
    path.write_text(json.dumps(transcript, ensure_ascii=False), encoding="utf-8")
    return path
