"""Code extraction: fences, prose, <think> traces, and answers cut at the token limit."""

from __future__ import annotations

import pytest

from benchrig.checks.extract import extract_code, truncation_message
from benchrig.thinking import split_thinking

CODE = "def f(x):\n    return x + 1\n"


def test_fenced_block_with_prose_around() -> None:
    text = f"Sure! Here it is:\n\n```python\n{CODE}```\n\nThis adds one. Hope it helps!"
    found = extract_code(text, ("f",))
    assert found.code == CODE
    assert found.how == "fenced"
    assert not found.truncated


def test_block_that_defines_the_entry_point_wins_over_usage_examples() -> None:
    text = f"```python\n{CODE}```\nUsage:\n```python\nprint(f(1))\nprint(f(2))\nprint(f(3))\n```"
    assert extract_code(text, ("f",)).code == CODE


def test_closing_fence_glued_to_the_last_line() -> None:
    text = "```python\ndef f(x):\n    return x + 1```\nDone."
    assert extract_code(text, ("f",)).code == "def f(x):\n    return x + 1\n"


def test_bare_code_with_trailing_explanation() -> None:
    text = f"{CODE}\nThis function returns its argument plus one."
    found = extract_code(text, ("f",))
    assert found.code is not None and found.code.strip() == CODE.strip()
    assert found.how == "bare"


def test_code_only_inside_think_is_ignored() -> None:
    text = f"<think>\n```python\n{CODE}```\n</think>\nI could not decide."
    found = extract_code(text, ("f",))
    assert found.code is None
    assert not found.truncated


def test_unclosed_think_hides_everything_after_it() -> None:
    text = "answer <think> secret ```python\nx=1\n```"
    assert split_thinking(text)[1] == "answer "
    assert extract_code(text).code is None


def test_code_after_think_is_used() -> None:
    text = f"<think>def f(x): return 0</think>\n```python\n{CODE}```"
    assert extract_code(text, ("f",)).code == CODE


def test_cut_at_token_limit_inside_the_block_is_truncated() -> None:
    text = "Here:\n```python\ndef f(x):\n    return"
    found = extract_code(text, ("f",), hit_token_limit=True)
    assert found.code is None
    assert found.truncated


def test_cut_at_token_limit_after_a_complete_block_is_not_truncated() -> None:
    text = f"```python\n{CODE}```\nNow let me explain at great length why"
    found = extract_code(text, ("f",), hit_token_limit=True)
    assert found.code == CODE
    assert not found.truncated


def test_unclosed_fence_without_limit_is_taken_as_code() -> None:
    found = extract_code(f"```python\n{CODE}", ("f",))
    assert found.code == CODE
    assert found.how == "unclosed-fence"


def test_prose_only_has_no_code() -> None:
    found = extract_code("I think you should use a dictionary.", ("f",))
    assert found.code is None and not found.truncated


def test_truncation_message_is_exact() -> None:
    assert truncation_message(512) == (
        "Response truncated at num_predict=512 before the code was complete")


def test_a_block_indented_in_a_list_item_is_dedented() -> None:
    text = "1. The function:\n\n   ```python\n   def f(x):\n       return x + 1\n   ```\n2. Done.\n"
    found = extract_code(text, ("f",))
    assert (found.code, found.how) == (CODE, "fenced")


DOCUMENTED = '''def f(x):
    """Add one.

    ```
    >>> f(1)
    2
    ```
    """
    return x + 1
'''


def test_an_indented_fence_inside_a_docstring_does_not_close_the_block() -> None:
    found = extract_code(f"Here:\n```python\n{DOCUMENTED}```\nThat is all.", ("f",))
    assert (found.code, found.how) == (DOCUMENTED, "fenced")


def test_a_body_that_does_not_parse_runs_on_to_the_fence_that_makes_it_parse() -> None:
    glued = DOCUMENTED.replace("    ```\n    \"\"\"", "    Done. ```\n    \"\"\"")
    found = extract_code(f"```python\n{glued}```\n", ("f",))
    assert found.code == glued


def test_blocks_are_not_merged_when_neither_parses_as_one() -> None:
    text = f"```python\ndef f(:\n```\nFixed:\n```python\n{CODE}```\n"
    assert extract_code(text, ("f",)).code == CODE
    assert extract_code("```python\ndef f(:\n```\n```text\nx\n```\n").code == "def f(:\n"


def test_a_cut_answer_whose_only_fence_is_in_a_docstring_is_truncated() -> None:
    cut = DOCUMENTED.split("    \"\"\"\n    return")[0]
    assert extract_code(f"```python\n{cut}", ("f",), hit_token_limit=True).truncated


# Nested past the parser's depth: ast.parse raises RecursionError (3.11) or MemoryError.
NESTED = "x = " + "-" * 3000 + "1"


def test_an_answer_nested_past_the_parsers_depth_is_read_not_raised() -> None:
    for text in (NESTED, f"```python\n{NESTED}\n```", f"```\n{NESTED}\n", f"{CODE}\n{NESTED}",
                 f"```python\ndef f(x):\n    return {'-' * 3000}1\n```"):
        extract_code(text, ("f",))  # the model's text: no exception escapes


def test_a_check_that_crashes_on_the_answer_fails_it_with_the_reason(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever reading the model's answer raises is the model's failure, counted, never a
    harness error (which would leave the pass rate)."""
    from benchrig.checks import hidden_tests as code
    from benchrig.checks.judge import judge
    from benchrig.core.settings import Settings
    from benchrig.core.transcript import Transcript
    from benchrig.spec import load_task
    from tests.conftest import TASKS

    task = load_task(TASKS / "lru-cache.md")
    verdict = judge(task, Transcript(answer=NESTED), Settings())
    assert verdict.result == "fail" and len(verdict.details) == len(task.test_names)

    def explode(*_: object, **__: object) -> None:
        raise RecursionError("maximum recursion depth exceeded\x1b[2J")

    monkeypatch.setattr(code, "extract_code", explode)
    verdict = judge(task, Transcript(answer="anything"), Settings())
    assert verdict.result == "fail"
    assert verdict.notes == ("the answer could not be read: RecursionError: maximum recursion "
                             "depth exceeded\\x1b[2J")
    assert all(not d.passed for d in verdict.details)
    # one mechanism (checks.guard.model_text): recorded and logged as every unreadable text is
    assert verdict.evidence["unreadable"] == verdict.notes
