"""Cost of the sanitizer for outside text: textsafe.printable and textsafe.stored on 1 MB.

    .venv/bin/python bench/sanitize.py [--rounds 9]

Three texts of 1 MB (characters): typical English ASCII code and prose, Polish prose
(non-ASCII, many lines), and hostile text (C0/C1 controls, CSI, ESC, bidi overrides,
newlines and lone surrogates every few characters). Each function runs with its limit
raised to the whole text, so nothing is cut and every character is looked at; the figure
is the median of `--rounds` runs. The target (issue 10) is 1 MB of typical text in under
10 ms; figures go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchrig import textsafe  # noqa: E402

SIZE = 1 << 20
TARGET_MS = 10.0
ASCII = ('def add(a, b):\n    """Return the sum of a and b."""\n    return a + b\n\n'
         "The answer is 42, because each step doubles the previous one.\n")
POLISH = ("Zażółć gęślą jaźń. Pchnąć w tę łódź jeża lub ośm skrzyń fig.\n"
          "Źdźbło trawy kołysało się na wietrze, a żółw szedł powoli ku rzece.\n")
HOSTILE = ("ok\x1b[2J\x9b31m\u202eevil\u2066\r\n"
           "lru-cache m: pass (3/3 checks)\x07\ud800\x00\t\u2028\ufeff")


def sized(unit: str) -> str:
    return (unit * (SIZE // len(unit) + 1))[:SIZE]


def median_ms(function: Callable[[str], str], text: str, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        function(text)
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    rounds = parser.parse_args().rounds
    texts = {"typical ASCII": sized(ASCII), "Polish, multi-line": sized(POLISH),
             "hostile": sized(HOSTILE)}
    functions: dict[str, Callable[[str], str]] = {
        "printable": lambda text: textsafe.printable(text, SIZE),
        "stored": lambda text: textsafe.stored(text, SIZE),
    }
    print(f"1 MB ({SIZE} characters), median of {rounds} runs; target {TARGET_MS:.0f} ms "
          "for typical text\n")
    print("| text | printable ms | stored ms |")
    print("|---|---|---|")
    for name, text in texts.items():
        figures = [median_ms(function, text, rounds) for function in functions.values()]
        print(f"| {name} | " + " | ".join(f"{ms:.2f}" for ms in figures) + " |")


if __name__ == "__main__":
    main()
