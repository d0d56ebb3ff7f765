"""The load suite's views: per sweep, the curve of its levels (TTFT p50/p99, ITL, E2E and
throughput against concurrency or rate), its knee and latency–throughput frontier; as text,
as chart data for the HTML report, and compared side against side with bootstrap intervals."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchrig.jsonsafe import finite
from benchrig.load.distributions import difference_intervals, percentile
from benchrig.report.facets import facet
from benchrig.resultio.record import as_records
from benchrig.textsafe import label

KNEE_SHARE = 0.9  # the knee: the first level reaching this share of the best throughput
SPARK = "▁▂▃▄▅▆▇█"

Json = dict[str, Any]


@dataclass(frozen=True)
class Point:
    """One level of a curve, read from a result's `evidence.load` (unknown: None)."""

    level: float
    requests: int
    errors: int
    ttft_p50: float | None
    ttft_p99: float | None
    itl_p50: float | None
    itl_p99: float | None
    e2e_p50: float | None
    e2e_p99: float | None
    req_per_s: float | None
    tok_per_s: float | None
    goodput: float | None  # share of requests meeting every SLO
    path: Path | None  # its result file: compare reads the raw samples there (samples_of)
    slo: str = ""  # the SLOs goodput counts against (`ttft_ms≤500 itl_ms≤50`), printable
    index: int | None = None  # its place in the results given to `curves` (the browser's row)


@dataclass(frozen=True)
class Curve:
    """The levels of one (task, model, driver, provider, label, mode) in level order."""

    key: tuple[str, ...]
    mode: str
    points: tuple[Point, ...]

    @property
    def name(self) -> str:
        task, model, driver, provider, run_label, _ = self.key
        parts = [label(task), label(model), label(driver)]
        if provider:
            parts.append(label(provider))
        if run_label:
            parts.append(f"[{label(run_label)}]")
        return " · ".join(parts)

    @property
    def slo(self) -> str:
        """The SLOs its goodput counts against ("" when none was given; each level's, `/`
        between, when they differ)."""
        return " / ".join(dict.fromkeys(p.slo for p in self.points if p.slo))

    def knee(self) -> float | None:
        """The first level reaching KNEE_SHARE of the best request throughput (three levels
        at least: fewer make no curve to bend)."""
        rates = [p.req_per_s for p in self.points]
        known = [r for r in rates if r is not None]
        if len(known) < 3:
            return None
        best = max(known)
        return next(p.level for p in self.points
                    if p.req_per_s is not None and p.req_per_s >= KNEE_SHARE * best)

    def frontier(self) -> set[float]:
        """Levels on the latency–throughput frontier: no other level has both more output
        tokens/s and a lower p99 end-to-end latency."""
        known = [p for p in self.points if p.tok_per_s is not None and p.e2e_p99 is not None]
        return {p.level for p in known if not any(
            q.tok_per_s >= p.tok_per_s and q.e2e_p99 <= p.e2e_p99  # type: ignore[operator]
            and (q.tok_per_s, q.e2e_p99) != (p.tok_per_s, p.e2e_p99) for q in known)}


def _num(value: Any) -> float | None:
    return finite(value)


def _p(figures: Any, name: str) -> float | None:
    return _num(figures.get(name)) if isinstance(figures, dict) else None


def slo_text(goodput: Any) -> str:
    """A level's SLOs as `name≤limit` pairs (names printable, limits finite), "" when none."""
    slo = goodput.get("slo") if isinstance(goodput, dict) else None
    if not isinstance(slo, dict):
        return ""
    return " ".join(f"{label(name)}≤{limit:g}" for name, value in sorted(slo.items(), key=str)
                    if (limit := finite(value)) is not None)


def _point(load: Mapping[str, Any], path: Path | None, index: int | None = None
           ) -> Point | None:
    level = _num(load.get("concurrency") if load.get("mode") == "concurrency"
                 else load.get("rate"))
    if level is None:
        return None
    ttft, itl, e2e = (load.get(k) or {} for k in ("ttft_ms", "itl_ms", "e2e_ms"))
    goodput = load.get("goodput")
    return Point(level, int(_num(load.get("requests")) or 0), int(_num(load.get("errors")) or 0),
                 _p(ttft, "p50"), _p(ttft, "p99"), _p(itl, "p50"), _p(itl, "p99"),
                 _p(e2e, "p50"), _p(e2e, "p99"), _num(load.get("request_throughput")),
                 _num(load.get("output_tokens_per_s")),
                 _p(goodput, "share") if isinstance(goodput, dict) else None, path,
                 slo_text(goodput), index)


def samples_of(point: Point) -> dict[str, list[float]]:
    """A level's raw samples by figure, read from its result file now (records leave them
    there: record.EVIDENCE_LEFT), finite values only; {} when the file is gone or has none."""
    if point.path is None:
        return {}
    from benchrig.resultio.files import load_results

    loaded = load_results([point.path]).results
    load = (loaded[0].get("evidence") or {}).get("load") if loaded else None
    found = load.get("samples") if isinstance(load, dict) else None
    if not isinstance(found, dict):
        return {}
    return {k: [x for x in v if finite(x) is not None] for k, v in found.items()
            if isinstance(v, list)}


def curves(results: Iterable[Mapping[str, Any]]) -> list[Curve]:
    """The load results as curves; a level measured twice shows its latest result."""
    found: dict[tuple[str, ...], dict[float, tuple[str, Point]]] = {}
    for index, r in enumerate(as_records(results)):
        load = (r.evidence or {}).get("load") if facet(r.suite).levels else None
        if not isinstance(load, dict):
            continue
        point = _point(load, r.path, index)
        if point is None:
            continue
        key = (r.task, r.model, r.driver, r.provider or "", r.label or "",
               str(load.get("mode")))
        levels = found.setdefault(key, {})
        if point.level not in levels or levels[point.level][0] <= r.started_at:
            levels[point.level] = (r.started_at, point)
    return [Curve(key, key[-1], tuple(p for _, (_, p) in sorted(levels.items())))
            for key, levels in found.items()]


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def spark(values: Sequence[float | None]) -> str:
    """A one-line curve: each value as one of eight bar heights (— for unknown)."""
    known = [v for v in values if v is not None]
    top = max(known, default=0.0) or 1.0
    return "".join("—" if v is None else SPARK[min(7, int(v / top * 7.999))] for v in values)


HEADERS = ("level", "req", "err", "TTFT p50", "TTFT p99", "ITL p50", "ITL p99", "E2E p50",
           "E2E p99", "req/s", "tok/s", "goodput", "")


def _row(p: Point, curve: Curve, knee: float | None, frontier: set[float]) -> list[str]:
    marks = ("knee " if p.level == knee else "") + ("◆" if p.level in frontier else "")
    level = f"{p.level:g}" + ("" if curve.mode == "concurrency" else "/s")
    return [level, str(p.requests), str(p.errors), _ms(p.ttft_p50), _ms(p.ttft_p99),
            _ms(p.itl_p50), _ms(p.itl_p99), _ms(p.e2e_p50), _ms(p.e2e_p99),
            _rate(p.req_per_s), _rate(p.tok_per_s),
            _share(p.goodput), marks.strip()]


def table_rows(curve: Curve) -> list[list[str]]:
    """A curve's table rows as every view shows them (HEADERS' columns)."""
    knee, frontier = curve.knee(), curve.frontier()
    return [_row(p, curve, knee, frontier) for p in curve.points]


def render_curves(results: Iterable[Mapping[str, Any]]) -> str:
    """The load curves as text (empty when there are none): a table per curve, ms and per
    second, the knee and the frontier marked, then one-line curves of TTFT and throughput."""
    lines: list[str] = []
    for curve in curves(results):
        rows = [list(HEADERS), *table_rows(curve)]
        widths = [max(len(r[i]) for r in rows) for i in range(len(HEADERS))]
        lines += ["", f"Load · {curve.name} · by {curve.mode}"]
        lines += ["  " + "  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                  for r in rows]
        lines.append(f"  TTFT p50 {spark([p.ttft_p50 for p in curve.points])}  "
                     f"TTFT p99 {spark([p.ttft_p99 for p in curve.points])}  "
                     f"tok/s {spark([p.tok_per_s for p in curve.points])}")
        if curve.slo:
            lines.append(f"  goodput: the share of requests meeting {curve.slo}")
    if lines:
        lines += ["", "Latencies in ms (ITL per token, a multi-token chunk spread over its "
                  "tokens); ◆ on the latency–throughput frontier (no level has more tok/s "
                  f"and a lower E2E p99); knee: the first level at {KNEE_SHARE:.0%} of the "
                  "best req/s."]
    return "\n".join(lines[1:]) + "\n" if lines else ""


def markdown_curves(results: Iterable[Mapping[str, Any]]) -> str:
    """The curves as Markdown (empty when there are none): a table per curve, every cell
    through report.markdown's `row`, so a server's or model's name adds no markup."""
    from benchrig.report.markdown import header, row, text

    lines: list[str] = []
    for curve in curves(results):
        lines += ["", f"### Load · {text(curve.name)} · by {text(curve.mode)}", "",
                  *header(HEADERS), *(row(cells) for cells in table_rows(curve))]
        if curve.slo:
            lines += ["", f"Goodput: the share of requests meeting {text(curve.slo)}."]
    return "\n".join(["## Load", *lines]) + "\n" if lines else ""


def json_curves(results: Iterable[Mapping[str, Any]]) -> list[Json]:
    """The curves for `summary --format json`: per curve its names (as given: JSON escapes
    them), mode, knee and frontier, and each level's figures (ms, per second; unknown: null)."""
    made = []
    for curve in curves(results):
        task, model, driver, provider, run_label, mode = curve.key
        knee, frontier = curve.knee(), curve.frontier()
        made.append({
            "task": task, "model": model, "driver": driver, "provider": provider or None,
            "label": run_label or None, "mode": mode, "knee": knee,
            "levels": [{"level": p.level, "requests": p.requests, "errors": p.errors,
                        "ttft_ms": {"p50": p.ttft_p50, "p99": p.ttft_p99},
                        "itl_ms": {"p50": p.itl_p50, "p99": p.itl_p99},
                        "e2e_ms": {"p50": p.e2e_p50, "p99": p.e2e_p99},
                        "request_throughput": p.req_per_s, "output_tokens_per_s": p.tok_per_s,
                        "goodput_share": p.goodput, "goodput_slo": p.slo or None,
                        "frontier": p.level in frontier}
                       for p in curve.points]})
    return made


def html_curves(results: Iterable[Mapping[str, Any]], width: int = 360) -> list[Json]:
    """Chart data for the HTML report: per curve, TTFT p50/p99 and tok/s against the level
    (polylines in a 0–190 px box), and the table rows."""
    made = []
    for curve in curves(results):
        points = curve.points
        top_x = max(p.level for p in points) or 1.0
        top_ms = max((v for p in points for v in (p.ttft_p50, p.ttft_p99) if v), default=1.0)
        top_tok = max((p.tok_per_s or 0.0 for p in points), default=0.0) or 1.0

        def path(values: list[tuple[float, float | None]], top: float,
                 top_x: float = top_x) -> str:
            return " ".join(f"{40 + x / top_x * width:.1f},{190 - y / top * 170:.1f}"
                            for x, y in values if y is not None)

        frontier = curve.frontier()
        # the latency–throughput plane: tok/s across, E2E p99 up, the frontier joined
        plane = [p for p in points if p.tok_per_s is not None and p.e2e_p99 is not None]
        top_e2e = max((p.e2e_p99 or 0.0 for p in plane), default=0.0) or 1.0

        def at(p: Point, top_tok: float = top_tok, top_e2e: float = top_e2e
               ) -> tuple[float, float]:
            return (40 + (p.tok_per_s or 0.0) / top_tok * width,
                    190 - (p.e2e_p99 or 0.0) / top_e2e * 170)

        made.append({
            "top_e2e": f"{top_e2e:.0f}", "slo": curve.slo,
            "plane": [{"x": f"{at(p)[0]:.1f}", "y": f"{at(p)[1]:.1f}",
                       "on": p.level in frontier,
                       "title": f"{p.level:g}: {_rate(p.tok_per_s)} tok/s, E2E p99 "
                                f"{_ms(p.e2e_p99)} ms"} for p in plane],
            "frontier": " ".join(f"{at(p)[0]:.1f},{at(p)[1]:.1f}" for p in sorted(
                (p for p in plane if p.level in frontier),
                key=lambda p: p.tok_per_s or 0.0)),
            "name": curve.name, "mode": curve.mode, "top_x": f"{top_x:g}",
            "top_ms": f"{top_ms:.0f}", "top_tok": f"{top_tok:.0f}",
            "ttft_p50": path([(p.level, p.ttft_p50) for p in points], top_ms),
            "ttft_p99": path([(p.level, p.ttft_p99) for p in points], top_ms),
            "tok": path([(p.level, p.tok_per_s) for p in points], top_tok),
            "headers": list(HEADERS), "rows": table_rows(curve)})
    return made


FIGURES = (("ttft_ms", "TTFT"), ("itl_ms", "ITL"), ("e2e_ms", "E2E"))
BOOTSTRAP_SAMPLES = 1000  # per side and figure: a level's 4,000 ITLs cost 4× the time


def thinned(values: Sequence[float]) -> list[float]:
    """At most BOOTSTRAP_SAMPLES of `values`, evenly spaced."""
    if len(values) <= BOOTSTRAP_SAMPLES:
        return list(values)
    step = len(values) / BOOTSTRAP_SAMPLES
    return [values[int(i * step)] for i in range(BOOTSTRAP_SAMPLES)]


@dataclass(frozen=True)
class Shift:
    """One figure's percentile on both sides of a shared level, B − A and its interval."""

    figure: str  # ttft_ms, itl_ms or e2e_ms
    q: int
    a: float | None
    b: float | None
    span: tuple[float, float] | None  # 95 % bootstrap interval of B − A

    @property
    def difference(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a


@dataclass(frozen=True)
class SharedLevel:
    """A level both sides measured: each side's point and the shifts of its percentiles."""

    level: float
    a: Point
    b: Point
    shifts: tuple[Shift, ...]


def compared(a: Iterable[Mapping[str, Any]], b: Iterable[Mapping[str, Any]], seed: int = 0
             ) -> list[tuple[tuple[str, str], list[SharedLevel]]]:
    """Per (task, mode) both sides swept, their shared levels: p50 and p99 of TTFT, ITL and
    E2E with B − A and its 95 % bootstrap interval (each side's samples, at most
    BOOTSTRAP_SAMPLES evenly spaced, resampled on their own, seeded)."""
    left = {(c.key[0], c.mode): c for c in curves(a)}
    right = {(c.key[0], c.mode): c for c in curves(b)}
    made = []
    for key in sorted(set(left) & set(right)):
        pa = {p.level: p for p in left[key].points}
        pb = {p.level: p for p in right[key].points}
        levels = []
        for level in sorted(set(pa) & set(pb)):
            sa, sb = samples_of(pa[level]), samples_of(pb[level])  # one level's, then freed
            shifts = []
            for name, _ in FIGURES:
                xa, xb = sa.get(name, []), sb.get(name, [])
                spans = difference_intervals(thinned(xa), thinned(xb), (50, 99), seed)
                shifts += [Shift(name, q, percentile(xa, q), percentile(xb, q), spans.get(q))
                           for q in (50, 99)]
            levels.append(SharedLevel(level, pa[level], pb[level], tuple(shifts)))
        made.append((key, levels))
    return made


def _pair(a: float | None, b: float | None, shown: Any) -> str:
    return f"{shown(a)} → {shown(b)}"


def render_compare(a: Iterable[Mapping[str, Any]], b: Iterable[Mapping[str, Any]],
                   names: tuple[str, str], seed: int = 0) -> str:
    """Two sides' load curves level by level (same task and mode, `compared`): B − A of
    the p50 and p99 of TTFT, ITL and E2E with its 95 % bootstrap interval, then each
    side's request and token throughput and goodput; empty when a side has no load
    results."""
    shown = dict(FIGURES)
    lines: list[str] = []
    for key, levels in compared(a, b, seed):
        lines += ["", f"Load · {label(key[0])} · by {key[1]}: {label(names[1])} − "
                  f"{label(names[0])} (95 % bootstrap interval); A → B"]
        for lv in levels:
            cells = [f"{shown[s.figure]} p{s.q} " + (
                "—" if s.span is None or s.difference is None else
                f"{s.difference:+.1f} [{s.span[0]:+.1f}, {s.span[1]:+.1f}] ms")
                for s in lv.shifts]
            lines.append(f"  {lv.level:g}: " + " · ".join(cells))
            lines.append(f"  {' ' * len(f'{lv.level:g}')}  req/s "
                         f"{_pair(lv.a.req_per_s, lv.b.req_per_s, _rate)} · tok/s "
                         f"{_pair(lv.a.tok_per_s, lv.b.tok_per_s, _rate)} · goodput "
                         f"{_pair(lv.a.goodput, lv.b.goodput, _share)}"
                         + (f" ({lv.a.slo or '—'} / {lv.b.slo or '—'})"
                            if lv.a.slo or lv.b.slo else ""))
    return "\n".join(lines[1:]) + "\n" if lines else ""


def _share(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.0f}%"


def json_compare(a: Iterable[Mapping[str, Any]], b: Iterable[Mapping[str, Any]],
                 seed: int = 0) -> list[Json]:
    """`compared` for `compare --format json`: per (task, mode), per shared level, each
    side's throughput and goodput, and each percentile's A, B, B − A and interval."""
    def side(p: Point) -> Json:
        return {"request_throughput": p.req_per_s, "output_tokens_per_s": p.tok_per_s,
                "goodput_share": p.goodput, "goodput_slo": p.slo or None}

    return [{"task": key[0], "mode": key[1], "levels": [
        {"level": lv.level, "a": side(lv.a), "b": side(lv.b),
         "percentiles": [{"figure": s.figure, "q": s.q, "a": s.a, "b": s.b,
                          "difference": s.difference,
                          "interval": None if s.span is None else list(s.span)}
                         for s in lv.shifts]} for lv in levels]}
        for key, levels in compared(a, b, seed)]
