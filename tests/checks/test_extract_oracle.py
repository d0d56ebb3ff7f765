"""Code extraction finds the same blocks as the extraction it replaced (kept here as the
oracle: it rescanned every later fence for each opening one), on every answer in the tests
and on generated ones; and its cost grows with the answer, not with fences × answer."""

from __future__ import annotations

import ast
import re
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchrig.checks import extract
from benchrig.checks.extract import CODE_LANGS, FENCE, _body, _indent, _parses, extract_code
from tests.conftest import SOLUTIONS

TESTS = Path(__file__).resolve().parent.parent


# --- the oracle: benchrig/checks/extract.py as it was before it was made linear ----------

def oracle_closings(text: str, opening: re.Match[str]) -> list[tuple[int, int, bool]]:
    marker = opening.group(1)
    limit = _indent(text[opening.start():opening.start(1)]) + 3
    fence = re.compile(rf"^([^\n]*?){re.escape(marker[0])}{{{len(marker)},}}[ \t]*$",
                       re.MULTILINE)
    found = []
    for match in fence.finditer(text, opening.end()):
        lead = match.group(1)
        if lead.strip():
            found.append((match.start() + len(lead), match.end(), True))
        else:
            found.append((match.start(), match.end(), _indent(lead) <= limit))
    return found


def oracle_blocks(text: str) -> tuple[list[tuple[str, str]], str | None]:
    blocks: list[tuple[str, str]] = []
    pos = 0
    while match := FENCE.search(text, pos):
        lang = match.group(2).lower()
        closings = oracle_closings(text, match)
        chosen = next(((end, after) for end, after, rule in closings if rule), None)
        body = _body(text[match.end():chosen[0]]) if chosen else ""
        if lang in CODE_LANGS and (chosen is None or not _parses(body)):
            for end, after, _ in closings:
                candidate = _body(text[match.end():end])
                if (chosen is None or end > chosen[0]) and _parses(candidate):
                    chosen, body = (end, after), candidate
                    break
        if chosen is None:
            return blocks, _body(text[match.end():]) if lang in CODE_LANGS else None
        blocks.append((lang, body))
        pos = chosen[1]
    return blocks, None


# --- the answers ---------------------------------------------------------------------------

# Where the answers are: each folder of test modules, and the bundled solutions. The strings
# are read inside the test, once, not at collection, which every xdist worker repeats.
SOURCES = [*sorted({path.parent.relative_to(TESTS).as_posix() for path in TESTS.rglob("*.py")}),
           "solutions"]


def answers_in(source: str) -> list[str]:
    """Every string in the source's test modules that holds a fence; for "solutions", each
    bundled solution fenced in the ways models fence code."""
    found = set()
    if source != "solutions":
        for module in sorted((TESTS / source).glob("*.py")):
            for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                        and ("```" in node.value or "~~~" in node.value)):
                    found.add(node.value)
        return sorted(found)
    for solution in sorted(SOLUTIONS.glob("*.py")):
        code = solution.read_text(encoding="utf-8")
        found |= {f"```python\n{code}```\n", f"Here:\n\n```py\n{code}\n```\nDone.",
                  f"1. Step\n   ```python\n   {code.replace(chr(10), chr(10) + '   ')}\n   ```",
                  f"~~~python\n{code}~~~", f"```python\n{code.rstrip()}```",
                  f"```python\n{code}", f"```\n{code}```\n```text\nout\n```"}
    return sorted(found)


def same_extraction(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert extract._blocks(text) == oracle_blocks(text)
    for entry_points in ((), ("f",), ("solve", "Solver")):
        for limit in (False, True):
            now = extract_code(text, entry_points, limit)
            with monkeypatch.context() as patch:
                patch.setattr(extract, "_blocks", oracle_blocks)
                before = extract_code(text, entry_points, limit)
            assert now == before


def test_the_answers_are_found() -> None:
    """The folders' tests below pass on an empty list: the strings must be found at all (98
    of them when they became one test per folder; the bundled solutions 7 ways each)."""
    assert len(answers_in("solutions")) >= 7 * len(list(SOLUTIONS.glob("*.py"))) > 0
    assert sum(len(answers_in(source)) for source in SOURCES if source != "solutions") >= 60


@pytest.mark.parametrize("source", SOURCES)
def test_every_answer_in_the_tests_is_extracted_as_before(
        source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for text in answers_in(source):
        try:
            same_extraction(text, monkeypatch)
        except AssertionError as failed:
            raise AssertionError(f"extracted otherwise than before: {text!r}") from failed


PIECES = st.sampled_from([
    "```python\n", "```py\n", "```\n", "~~~python\n", "````python\n", "```js\n", "  ```python\n",
    "    ```python\n", "```python title\n", "```\n", "~~~\n", "````\n", "  ```\n", "    ```\n",
    "        ```\n", "```   \n", "``\n", "def f(x):\n", "    return x + 1\n", "    return (\n",
    "def f(:\n", "class Solver:\n", "    pass\n", '    """Usage:\n', '    ```\n', '    """\n',
    "x = 1```\n", "print(f(1))```\n", "Some prose.\n", "\n", "Here `code` is.\n", "~~~~\n",
    "def solve():\n    return 1\n", "    ```python\n", "\t```\n", "```\r\n", "x = '```'\n",
])


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, max_size=25).map("".join), st.booleans())
def test_generated_answers_are_extracted_as_before(text: str, trailing: bool) -> None:
    text = text if trailing else text.rstrip("\n")
    assert extract._blocks(text) == oracle_blocks(text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="`~ \n\tpydef:x()=1\"'", max_size=120))
def test_answers_of_fence_characters_are_extracted_as_before(text: str) -> None:
    assert extract._blocks(text) == oracle_blocks(text)


def fenced_answer(blocks: int) -> str:
    """An answer with `blocks` Python blocks, prose between them (the issue's measure)."""
    return "".join(f"Step {i}:\n\n```python\ndef f{i}(x):\n    return x + {i}\n```\n\n"
                   for i in range(blocks))


def test_extraction_grows_linearly_with_the_number_of_fences() -> None:
    """Before: 223 ms for 164 fences, every later fence rescanned for each opening one
    (quadratic). Ten times the fences must cost about ten times as much, not a hundred: a
    ratio measured in one run, of this thread's CPU time: wall time counts the slices other
    work took, and the longer side is cut into more of them (49x at load ~12, issue 23). The
    absolute figure, 3 ms for 164 fences, is bench/extract.py's."""
    small, large = fenced_answer(164), fenced_answer(1640)
    assert len(extract._blocks(large)[0]) == 1640
    ratio = min(_timed(large) for _ in range(5)) / min(_timed(small) for _ in range(5))
    assert ratio < 40, f"10x the fences cost {ratio:.0f}x the time"


def _timed(text: str) -> float:
    began = time.thread_time()
    extract._blocks(text)
    return time.thread_time() - began
