"""The report's data for its sample browser and charts, without a browser: the JSON island
cannot close its script block, the context chart is per window, colours never repeat."""

from __future__ import annotations

import json
from pathlib import Path

from benchrig.report.build import build
from benchrig.report.render_html import colour, context, render_html
from benchrig.report.viewer import island, payload
from benchrig.resultio.record import as_records
from tests.conftest import cli_call
from tests.helpers.result_sets import attempt, write
from tests.report.test_context_card import WINDOWS
from tests.report.test_context_card import results as context_results

CLOSER = "</script><script>document.title='pwned'</script><!--\u2028"


def test_outside_text_cannot_close_the_json_island() -> None:
    """A model named, or an answer holding, `</script>` must stay data in the page."""
    results = [attempt(CLOSER, "t1", "fail", answer_excerpt=CLOSER, notes=CLOSER)]
    text = island(payload(as_records(results), embed_details=True))
    assert "<" not in text and ">" not in text and "\u2028" not in text
    assert json.loads(text)["details"][0]["notes"] == CLOSER.replace("\u2028", "\\u2028")
    page = render_html(build(results))
    block = page[page.index('id="benchrig-data">'):]
    assert block.index("</script>") > block.index('"rows"')  # the island's own end only
    assert "<script>document.title" not in page


def test_the_context_chart_is_one_point_per_window_per_model() -> None:
    """Two runs over five windows: five points (the mean TTFT at each window), not one dot
    per attempt at the sum of its windows."""
    chart = context(build(context_results()))["context_chart"]
    assert chart is not None and len(chart["series"]) == 1
    ttft = chart["series"][0]["ttft"]
    assert [p["title"] for p in ttft] == [f"window {w}: {w / 2:.0f} ms" for w in WINDOWS]
    assert chart["top_x"] == max(WINDOWS)
    retrieval = [p["title"] for p in chart["series"][0]["retrieval"]]
    assert retrieval[0].endswith("100% retrieved") and retrieval[-1].endswith("50% retrieved")


def test_series_colours_stay_distinct_beyond_the_palette() -> None:
    assert len({colour(i) for i in range(40)}) == 40


def test_the_static_page_embeds_the_sidecar_capped(tmp_path: Path) -> None:
    """The file has no server: it embeds each attempt's prompt, whole answer (cut at
    ANSWER_CAP) and thinking from its transcript sidecar; a name with a path is not read."""
    from benchrig.report.viewer import ANSWER_CAP

    folder = write(tmp_path / "r", [attempt("alpha", "t1", "pass"),
                                    attempt("alpha", "t2", "pass")])
    secret = tmp_path / "secret.transcript.jsonl"
    secret.write_text(json.dumps({"kind": "prompt", "messages": "SECRET"}) + "\n",
                      encoding="utf-8")
    for file, name in zip(sorted(folder.glob("*.json")), ("t.transcript.jsonl",
                                                           "../secret.transcript.jsonl"),
                          strict=True):
        result = json.loads(file.read_text(encoding="utf-8"))
        result["transcript_file"] = name
        file.write_text(json.dumps(result), encoding="utf-8")
    (folder / "t.transcript.jsonl").write_text(
        json.dumps({"kind": "prompt", "messages": [{"role": "user", "content": "Say 5"}]})
        + "\n" + json.dumps({"kind": "answer", "text": "y" * 9000, "thinking": "hmm",
                             "tool_calls": [{"name": "add"}]}) + "\n", encoding="utf-8")
    page = tmp_path / "report.html"
    ran = cli_call("report", str(folder), "--html", str(page), results_dir=tmp_path)
    assert ran.code == 0, ran.stderr
    text = page.read_text(encoding="utf-8")
    block = text[text.index('id="benchrig-data">') + 19:]
    details = json.loads(block[:block.index("</script>")])["details"]
    read = [d for d in details if d["prompt"]]
    assert len(read) == 1 and "Say 5" in read[0]["prompt"] and read[0]["thinking"] == "hmm"
    assert read[0]["answer"].startswith(f"{'y' * ANSWER_CAP}… [{9000 - ANSWER_CAP} more")
    assert '"add"' in read[0]["tools"]
    assert "SECRET" not in text


def test_the_six_tool_use_rates_and_packs_have_their_own_panels() -> None:
    counts = {"call_turns": 2, "selection": 1, "arguments": 2, "structured": 2,
              "answer_turns": 1, "abstention": 1, "false_calls": 0}
    results = [attempt("alpha", "weather", "pass", suite="tool_use",
                       evidence={"tool_use": {"counts": counts}}),
               attempt("alpha", "t1", "pass")]
    report = build(results)
    (row,) = context(report)["tool_rates"]
    assert [(b.label, b.text) for b in row["bars"]] == [
        ("task success", "100.0% (1/1)"), ("tool selection", "50.0% (1/2)"),
        ("arguments", "100.0% (2/2)"), ("abstention", "100.0% (1/1)"),
        ("false calls", "0.0% (0/1)"), ("structured calls", "100.0% (2/2)")]
    page = render_html(report, packs=("humaneval <b>x</b> · alpha: pass@1 50.0%",))
    assert 'id="packs"' in page and "humaneval &lt;b&gt;x&lt;/b&gt; · alpha: pass@1" in page
