"""A pack's score as its suite reports it: pass@k over problems (Chen et al. 2021's estimator)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchrig.attempts import unit
from benchrig.core.errors import counts_against_model
from benchrig.packs import installed
from benchrig.report.stats import pass_at_k  # Chen et al. 2021's unbiased estimator
from benchrig.textsafe import printable

PUBLISHED_K = (1, 10, 100)  # the k HumanEval's own evaluation reports


@dataclass(frozen=True)
class PackScore:
    """One model's score on one pack."""

    pack: str
    model: str
    driver: str
    problems: int  # in the pack
    attempted: int  # problems with at least one counted attempt
    runs: int  # the fewest counted attempts of an attempted problem
    scores: dict[int, float]  # k → pass@k, mean over the attempted problems

    def line(self) -> str:
        shown = ", ".join(f"pass@{k} {100 * v:.1f}%" for k, v in self.scores.items())
        partial = ("" if self.attempted == self.problems else
                   f" (only {self.attempted} of {self.problems} problems: not comparable with "
                   "published figures)")
        return (f"{printable(self.pack)} · {printable(self.model)} · {printable(self.driver)}: "
                f"{shown} over {self.attempted}/{self.problems} problems, "
                f"{self.runs} run{'s' if self.runs != 1 else ''} each{partial}")


def pack_tasks(base: Path | None = None) -> dict[str, str]:
    """Each imported pack's task id → the pack's name: what a scorecard shows as the pack's
    own line (report.scorecard), out of its suite's score and the composite."""
    return {task: name for name, meta in installed(base).items()
            for task in (meta.get("task_ids") or {})}


def pack_scores(results: Sequence[Mapping[str, Any]], base: Path | None = None
                ) -> list[PackScore]:
    """pass@k per (pack, model, driver) for the results of tasks in an imported pack;
    attempts that do not count against the model (an infrastructure error) are left out."""
    owner = pack_tasks(base)
    sizes = {name: int(meta.get("problems") or 0) for name, meta in installed(base).items()}
    tally: dict[tuple[str, str, str], dict[str, list[int]]] = defaultdict(
        lambda: defaultdict(lambda: [0, 0]))
    for r in results:
        pack = owner.get(str(r.get("task")))
        if pack is None or not counts_against_model(r):
            continue
        counts = tally[(pack, str(r.get("model")), str(r.get("driver")))][unit(r)]
        counts[0] += 1
        counts[1] += r.get("result") == "pass"
    scores: list[PackScore] = []
    for (pack, model, driver), problems in sorted(tally.items()):
        runs = min(n for n, _ in problems.values())
        ks = sorted({1, runs, *(k for k in PUBLISHED_K if k <= runs)})
        values = {k: sum(pass_at_k(n, c, k) for n, c in problems.values()) / len(problems)
                  for k in ks}
        scores.append(PackScore(pack, model, driver, sizes[pack], len(problems), runs, values))
    return scores


def pack_report(results: Sequence[Mapping[str, Any]], base: Path | None = None) -> str:
    """The pack lines printed after a run's or a summary's table ("" when no pack ran)."""
    scores = pack_scores(results, base)
    if not scores:
        return ""
    return ("\npacks (the suite's own metric: pass@k over problems):\n"
            + "".join(f"  {s.line()}\n" for s in scores))
