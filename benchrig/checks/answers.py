"""Answer checks of the reasoning suite: `final_answer`, `regex`, `exact_or_contains`.

Only the answer counts — what follows `</think>`. A response that ended inside the
thinking has no answer. The optional `evaluator` (numeric, numeric_text) decides first
when both sides are numbers; otherwise the check type decides.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from benchrig.checks.conclusion import conclude
from benchrig.checks.evaluators import Decision, evaluate, known_evaluator
from benchrig.checks.guard import model_text
from benchrig.checks.normalize import (
    TAIL_CHARS,
    Answer,
    clean,
    final_text,
    normalize,
    numbers_in,
    parse_number,
    tail,
)
from benchrig.checks.rules import (
    UNBOUNDED_GAP,
    accepted_patterns,
    compile_pattern,
    pattern_misses,
)
from benchrig.core.check import CheckContext, check
from benchrig.core.settings import Settings
from benchrig.core.task import TaskSpec
from benchrig.core.transcript import Transcript
from benchrig.core.verdict import CheckDetail, Verdict, failed_details

MARKER = re.compile(r"final\s+answer\s*[:：]", re.IGNORECASE)
TRAILING = ".!;,。 \t"
EXTRACT_CHARS = 300


@dataclass(frozen=True)
class Outcome:
    """What one rule found in the answer and whether it is right."""

    passed: bool
    extracted: str | None
    message: str
    matched: str | None = None


def value_text(text: str) -> str:
    """A short answer as a person reads it: no Markdown or LaTeX, no trailing period."""
    return clean(text).strip().rstrip(TRAILING).strip()


def final_answer_value(answer: str) -> str | None:
    """The value of the last `Final answer:` line (or the next non-empty line when the
    marker stands alone); None when there is no marker."""
    text = clean(answer)
    markers = list(MARKER.finditer(text))
    if not markers:
        return None
    rest = text[markers[-1].end():]
    first, _, after = rest.partition("\n")
    if not first.strip():
        first = next((line for line in after.splitlines() if line.strip()), "")
    return value_text(first)


def full_match(patterns: list[str], text: str) -> str | None:
    """The first accepted pattern that `text` (normalized) matches in full."""
    subject = normalize(text)
    return next((p for p in patterns if re.fullmatch(p, subject, re.IGNORECASE)), None)


def contains(expected: str, text: str) -> bool:
    """`expected` in `text` as a whole: a number by its exact value, never as part of a
    longer number (11/60 is not 1/6, 1114.60 is not 114.6); words as whole words."""
    value = parse_number(normalize(expected))
    if value is not None:
        return value in numbers_in(text)
    phrase = re.escape(normalize(expected))
    return re.search(rf"(?<!\w){phrase}(?!\w)", text, re.IGNORECASE) is not None


def _expected(task: TaskSpec) -> str:
    return str(task.frontmatter["expected"])


def rule_final_answer(task: TaskSpec, answer: str) -> tuple[Outcome, str | None]:
    value = final_answer_value(answer)
    if value is None:
        return Outcome(False, None, "no 'Final answer:' line: no answer"), None
    accept = accepted_patterns(task.check, _expected(task))
    matched = full_match(accept, value)
    if matched is not None:
        return Outcome(True, value, f"final answer {value!r} accepted", matched), value
    return Outcome(False, value, f"final answer {value!r} is not an accepted answer "
                   f"(expected {_expected(task)!r})"), value


def rule_regex(task: TaskSpec, answer: str) -> tuple[Outcome, str | None]:
    conclusion = tail(answer)
    patterns = list(task.check["patterns"])
    subjects = task.check.get("subjects")
    missing = pattern_misses(patterns, subjects, conclusion)
    where = " where its subject is stated last" if subjects is not None else ""
    if missing:
        return Outcome(False, conclusion, f"the last {TAIL_CHARS} characters of the answer do "
                       f"not match pattern {', '.join(map(str, missing))} of {len(patterns)}"
                       f"{where}"), value_text(answer)
    return (Outcome(True, conclusion, f"all {len(patterns)} patterns match the conclusion"
                    f"{where}", " & ".join(patterns)), value_text(answer))


def rule_exact_or_contains(task: TaskSpec, answer: str) -> tuple[Outcome, str | None]:
    expected = _expected(task)
    whole = value_text(answer)
    if normalize(whole).casefold() == normalize(expected).casefold():
        return Outcome(True, whole, "the answer is exactly the expected one", "exact"), whole
    marked = final_answer_value(answer)
    want = parse_number(normalize(expected))
    if want is not None:
        return _concluded(expected, want, answer if marked is None else marked,
                          "the answer" if marked is None else "the final answer line"), whole
    where, scope = (("the final answer line", marked) if marked is not None
                    else (f"the last {TAIL_CHARS} characters", tail(answer)))
    found = contains(expected, normalize(scope))
    verb = ("contains" if found else "does not contain") if marked is not None else (
        "contain" if found else "do not contain")
    return Outcome(found, scope, f"{where} {verb} {expected!r}",
                   "contains" if found else None), whole


def _concluded(expected: str, want: Fraction, scope: str, where: str) -> Outcome:
    """A numeric expected answer against the value `scope` concludes with (conclusion)."""
    found = conclude(scope, percent_is_value="%" in expected)
    stated = found.stated
    if stated is None:
        return Outcome(False, scope, f"{where} states no number (expected {expected!r})")
    if found.alternative is not None:
        return Outcome(False, stated.shown, f"{where} concludes {stated.shown!r} but offers "
                       f"{found.alternative.shown!r} as another candidate: a hedged answer is "
                       "not an answer")
    if stated.value != want:
        return Outcome(False, stated.shown, f"{where} concludes {stated.shown!r} "
                       f"({found.how}), not {expected!r}")
    return Outcome(True, stated.shown, f"{where} concludes {expected!r} ({found.how})",
                   "conclusion")


Rule = Callable[[TaskSpec, str], tuple[Outcome, str | None]]


def truncation_note(settings: Settings, notes: str) -> str:
    """The notes of an answer the token limit cut off before it was right."""
    return (f"Response truncated at num_predict={settings.max_tokens} before the answer was "
            f"complete; {notes}")


def no_answer(kind: str, names: list[str], answer: Answer, transcript: Transcript,
              settings: Settings) -> Verdict | None:
    """A response that ended inside the thinking has no answer: every check fails. Cut off
    there by the token limit (not a normal stop), it is `truncated_thinking`; with no
    finish reason (replay) a cut-off is unknown, so it is not claimed."""
    if not answer.ended_in_thinking:
        return None
    cut_off = transcript.finish_reason == "length"
    if cut_off:
        message = (f"Response truncated at num_predict={settings.max_tokens} inside <think>: "
                   "no answer")
    elif transcript.finish_reason is None:  # a replayed file: a cut-off is not known
        message = ("the response ended inside <think> (finish reason unknown, so not "
                   "counted as truncated): no answer")
    else:
        message = "the response ended inside <think>: no answer"
    return Verdict("fail", failed_details(names, message), message,
                   truncated=cut_off, truncated_thinking=cut_off,
                   evidence={"check": kind, "extracted": None})


def score(task: TaskSpec, transcript: Transcript, settings: Settings, rule: Rule) -> Verdict:
    """Answer after </think> → evaluator layer → the rule; with evidence for an audit."""
    kind = str(task.check["type"])
    answer = final_text(transcript.answer, transcript.thinking)
    empty = no_answer(kind, [kind], answer, transcript, settings)
    if empty is not None:
        return empty
    cut = transcript.finish_reason == "length"
    evidence: dict[str, Any] = {"check": kind, "answer_chars": len(answer.text)}
    name = known_evaluator(task.frontmatter.get("evaluator"), task.id)
    with model_text("the answer"):  # a crash on it fails the check (checks.guard)
        outcome, candidate = rule(task, answer.text)
        decision = (evaluate(name, candidate, _expected(task)) if candidate is not None
                    else Decision(name, None))
    if decision.passed is not None:
        verb = "equals" if decision.passed else "is not"
        outcome = Outcome(decision.passed, candidate,
                          f"{name}: {decision.answer_value} {verb} {decision.expected_value}",
                          f"evaluator:{name}")
    evidence.update(extracted=None if outcome.extracted is None
                    else outcome.extracted[-EXTRACT_CHARS:],
                    matched=outcome.matched, evaluator=name,
                    evaluator_decided=decision.passed is not None)
    truncated = cut and not outcome.passed
    notes = outcome.message
    if truncated:
        notes = truncation_note(settings, notes)
    return Verdict("pass" if outcome.passed else "fail",
                   (CheckDetail(kind, outcome.passed, outcome.message, 0.0),), notes,
                   truncated=truncated, evidence=evidence)


# What the schema cannot see in a task's answer check: patterns that do not compile,
# unbounded gaps, and an `expected` answer that the task's own patterns would reject.

def expected_problems(meta: Mapping[str, Any]) -> list[str]:
    """The expected answer is there: every answer check compares with it."""
    kind = meta["check"]["type"]
    if not isinstance(meta.get("expected"), str):
        return [f"expected: a {kind} check needs the expected answer (a quoted string)"]
    return []


def final_answer_problems(meta: Mapping[str, Any]) -> list[str]:
    """Every accepted pattern compiles, and one of them accepts the expected answer."""
    problems = expected_problems(meta)
    if problems:
        return problems
    check, expected = meta["check"], str(meta["expected"])
    if not check.get("accept"):  # the expected answer, escaped, accepts itself: nothing to
        return []  # compile (a dataset validates this for each of 10,000 rows)
    accept = accepted_patterns(check, expected)
    compiled = [compile_pattern(p, f"check.accept[{i}]", problems)
                for i, p in enumerate(accept)]
    if not problems and not any(c.fullmatch(normalize(expected)) for c in compiled
                                if c is not None):
        problems.append(f"check.accept: no pattern accepts the expected answer "
                        f"{expected!r} (patterns see it as {normalize(expected)!r})")
    return problems


def regex_problems(meta: Mapping[str, Any]) -> list[str]:
    """Patterns (and subjects) compile, have bounded gaps, and fit the expected answer."""
    problems = expected_problems(meta)
    if problems:
        return problems
    check, expected = meta["check"], str(meta["expected"])
    patterns = list(check.get("patterns", []))
    subjects = check.get("subjects")
    fields = [(f"check.patterns[{i}]", p) for i, p in enumerate(patterns)]
    if subjects is not None:
        fields += [(f"check.subjects[{i}]", p) for i, p in enumerate(subjects)]
        if len(subjects) != len(patterns):
            problems.append(f"check.subjects: {len(subjects)} subjects for "
                            f"{len(patterns)} patterns (one per pattern, in order)")
    for field, pattern in fields:
        compile_pattern(pattern, field, problems)
        if UNBOUNDED_GAP.search(pattern):
            problems.append(f"{field}: {pattern!r} has an unbounded gap "
                            "(.* or .+); use a bounded one such as (?:\\w+ ){0,3}")
    missing = [] if problems else pattern_misses(patterns, subjects, tail(expected))
    if missing:
        problems.append(f"check.patterns: the expected answer {expected!r} does not match "
                        f"pattern {', '.join(map(str, missing))} (where its subject is "
                        "stated last, when it has one)")
    return problems


@check("final_answer", validate=final_answer_problems)
def check_final_answer(task: TaskSpec, transcript: Transcript, settings: Settings,
                       context: CheckContext) -> Verdict:
    """The last `Final answer:` line must match an accepted pattern in full."""
    return score(task, transcript, settings, rule_final_answer)


@check("regex", validate=regex_problems)
def check_regex(task: TaskSpec, transcript: Transcript, settings: Settings,
                context: CheckContext) -> Verdict:
    """Every pattern must match the conclusion: the last 300 normalized characters."""
    return score(task, transcript, settings, rule_regex)


@check("exact_or_contains", validate=expected_problems)
def check_exact_or_contains(task: TaskSpec, transcript: Transcript,
                            settings: Settings, context: CheckContext) -> Verdict:
    """The answer is the expected one, or its conclusion contains it as a whole."""
    return score(task, transcript, settings, rule_exact_or_contains)
