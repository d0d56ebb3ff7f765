"""Answer text → comparable text: thinking cut off, LaTeX simplified, Markdown and punctuation
collapsed, numbers read as whole numbers."""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from benchrig.thinking import split_thinking

TAIL_CHARS = 300
LATEX_PASSES = 16  # nesting levels of LaTeX unwrapped; a real answer needs two or three
# The longest number read as a value: its digits (whole, decimals, denominator) and the
# largest power of ten `1e…` may name. Past them a token is no number (no expected answer is
# that long), so `Fraction` never meets 4,300 digits (ValueError) nor 1e999999999 (a hang).
MAX_DIGITS = 100
MAX_NUMBER_CHARS = 4 * MAX_DIGITS
MAX_EXPONENT = 400

# LaTeX: \boxed{\dfrac{1}{6}} → 1/6. Innermost braces first, repeated until nothing changes.
_FRAC = re.compile(r"\\[dt]?frac\s*(?:\{([^{}]*)\}|(\d))\s*(?:\{([^{}]*)\}|(\d))")
_WRAPPERS = re.compile(
    r"\\(?:boxed|fbox|text|textbf|textit|textrm|mathrm|mathbf|mathit|mbox|operatorname|emph|"
    r"displaystyle|underline|overline)\s*\{([^{}]*)\}")
_ESCAPED = (("\\%", "%"), ("\\$", "$"), ("\\&", "&"), ("\\#", "#"), ("\\_", "_"),
            ("^{\\circ}", "°"), ("{,}", ","))
_COMMANDS = {"times": "×", "cdot": "·", "div": "÷", "approx": "≈", "pm": "±", "leq": "≤",
             "le": "≤", "geq": "≥", "ge": "≥", "neq": "≠", "to": "→", "rightarrow": "→",
             "implies": "⇒", "circ": "°", "left": "", "right": ""}
_COMMAND = re.compile(r"\\(" + "|".join(sorted(_COMMANDS, key=len, reverse=True)) +
                      r")(?![A-Za-z])")
_SPACES = re.compile(r"\\[,;:! ]|\\quad|\\qquad|~")
_MATH_DELIMITERS = re.compile(r"\$\$?|\\\(|\\\)|\\\[|\\\]")

# Markdown: emphasis, code, headings, quotes, bullets, horizontal rules, links.
_EMPHASIS = re.compile(r"(\*\*|__|\*|`+|~~)")
_LINE_MARKERS = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+|>[ \t]?|[-*+•·][ \t]+|-{3,}[ \t]*$)",
                           re.MULTILINE)
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")

# Punctuation between two digits belongs to a number (11:20, 1/6, 114.6, 1,025) and a minus
# sign before a digit to it (-3); everything else that is not a letter or digit is a space.
_FRACTION_SPACES = re.compile(r"(?<=\d)\s*/\s*(?=\d)")
_PUNCTUATION = re.compile(r"[.,:/](?!\d)|(?<!\d)[.,:/]|(?<=\w)[-−]|[-−](?!\d)|[^\w\s.,:/\-−]|_")
_WHITESPACE = re.compile(r"\s+")


def simplify_latex(text: str) -> str:
    """LaTeX an answer may be written in → plain text (`\\boxed{\\dfrac{1}{6}}` → `1/6`).
    At most LATEX_PASSES levels of nesting are unwrapped (each pass reads the whole text: a
    100,000-deep `\\boxed{…}` must not cost 100,000 passes); leftover braces are dropped."""
    previous = None
    for _ in range(LATEX_PASSES):
        if previous == text:
            break
        previous = text
        text = _FRAC.sub(lambda m: f"{m.group(1) or m.group(2)}/{m.group(3) or m.group(4)}",
                         text)
        text = _WRAPPERS.sub(lambda m: m.group(1), text)
    for latex, plain in _ESCAPED:
        text = text.replace(latex, plain)
    text = _COMMAND.sub(lambda m: _COMMANDS[m.group(1)], text)
    text = _SPACES.sub(" ", text)
    text = _MATH_DELIMITERS.sub(" ", text)
    return re.sub(r"\\[A-Za-z]+", " ", text).replace("{", "").replace("}", "")


def strip_markdown(text: str) -> str:
    """Emphasis, inline code, headings, quotes and bullets removed; line breaks kept."""
    text = _LINK.sub(r"\1", text)
    text = _LINE_MARKERS.sub("", text)
    return _EMPHASIS.sub("", text)


def clean(text: str) -> str:
    """LaTeX simplified and Markdown removed: the answer as a reader sees it."""
    return strip_markdown(simplify_latex(text))


def collapse(text: str) -> str:
    """Punctuation, symbols and line breaks → single spaces; numbers keep their `.,:/` and
    sign."""
    text = _PUNCTUATION.sub(" ", _FRACTION_SPACES.sub("/", text))
    return _WHITESPACE.sub(" ", text).strip()


def normalize(text: str) -> str:
    """The full normalization of `regex` checks and `Final answer:` values."""
    return collapse(clean(text))


def tail(text: str, chars: int = TAIL_CHARS) -> str:
    """The last `chars` characters of the normalized text (the conclusion of an answer),
    without a word or number cut in half at the start (a half of 1114.6 reads as 114.6)."""
    normalized = normalize(text)
    if len(normalized) <= chars:
        return normalized
    cut = normalized[-chars:]
    return cut if normalized[-chars - 1] == " " else cut.partition(" ")[2]


@dataclass(frozen=True)
class Answer:
    """What follows the thinking: the only text that is ever scored."""

    text: str
    ended_in_thinking: bool


def final_text(answer: str, thinking: str = "") -> Answer:
    """The answer after `</think>`; `ended_in_thinking` when the response stopped inside a
    trace (a separate reasoning field with nothing after it, or an unclosed `<think>`)."""
    _, text, unclosed = split_thinking(answer)
    return Answer(text, unclosed or (bool(thinking.strip()) and not text.strip()))


# Numbers: whole tokens only. 1,025 and 114.60 are one number each; 1114.60 is not 114.6.
_UNSIGNED = r"(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?"
NUMBER = re.compile(rf"(?<![\w./])([-−]?)({_UNSIGNED})(?:\s*/\s*({_UNSIGNED}))?(?![\d/])")


def parse_number(token: str) -> Fraction | None:
    """One number as written (`1,025`, `114.60`, `-3`, `1/6`) → its exact value."""
    match = NUMBER.fullmatch(token.strip())
    if match is None:
        return None
    return _value(match)


def _too_long(token: str) -> bool:
    return sum(ch.isdigit() for ch in token) > MAX_DIGITS


def exact_number(text: str) -> Fraction | None:
    """`text` as `Fraction` reads it ("42", " 42.0 ", "1/6", "-1.5e3"), bounded: None for
    anything else, and for a number with more than MAX_DIGITS digits or a power
    of ten past MAX_EXPONENT (checked before Fraction sees it: it would raise or hang)."""
    if len(text) > MAX_NUMBER_CHARS or _too_long(text):
        return None
    exponent = re.search(r"[eE]\s*([-+]?[\d_]+)", text)
    if exponent is not None and abs(int(exponent.group(1).replace("_", ""))) > MAX_EXPONENT:
        return None
    try:
        return Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        return None


def _value(match: re.Match[str]) -> Fraction | None:
    sign, whole, denominator = match.groups()
    if _too_long(match.group(0)):
        return None
    value = Fraction(whole.replace(",", ""))
    if denominator is not None:
        below = Fraction(denominator.replace(",", ""))
        if below == 0:
            return None
        value /= below
    return -value if sign else value


def number_matches(text: str) -> list[tuple[re.Match[str], Fraction]]:
    """Every whole number in `text`, in order: where it is written and its exact value."""
    found = []
    for match in NUMBER.finditer(text):
        value = _value(match)
        if value is not None:
            found.append((match, value))
    return found


def numbers_in(text: str) -> list[Fraction]:
    """Every whole number in `text`, in order, read exactly."""
    return [value for _, value in number_matches(text)]
