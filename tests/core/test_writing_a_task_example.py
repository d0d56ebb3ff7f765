"""docs/writing-a-task.md's dataset example, as written there: it validates, and it runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.conftest import answer_file, cli_call

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "writing-a-task.md"
BLOCK = re.compile(r"<!-- file: (?P<name>[\w.-]+) -->\n```\w*\n(?P<text>.*?)\n```\n", re.S)


def _files(folder: Path) -> list[str]:
    names = []
    for found in BLOCK.finditer(DOC.read_text(encoding="utf-8")):
        (folder / found["name"]).write_text(found["text"] + "\n", encoding="utf-8")
        names.append(found["name"])
    return names


def test_the_example_validates_and_runs(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    assert _files(tasks) == ["capitals.md", "capitals.jsonl", "square.md", "square.csv"]
    out = tmp_path / "results"
    env = {"BENCHRIG_TASKS_DIR": str(tasks)}
    ran = cli_call("validate", results_dir=out, env=env)
    assert ran.code == 0 and "2 task(s) valid (5 samples)" in ran.stdout, ran.stderr
    listed = cli_call("list", results_dir=out, env=env)
    assert "capitals.jsonl: 3 samples" in listed.stdout and "square.csv: 2 samples" in \
        listed.stdout
    answer = answer_file(tmp_path, "Final answer: Київ\n")
    ran = cli_call("run", "capitals", "-m", "m", "-d", "replay", "-p", str(answer),
                   "--results-dir", str(out), results_dir=out, env=env)
    verdicts = {json.loads(p.read_text(encoding="utf-8"))["sample_id"]:
                json.loads(p.read_text(encoding="utf-8"))["result"] for p in out.glob("*.json")}
    assert verdicts == {"fr": "fail", "pl": "fail", "ua": "pass"}, ran.stderr
    code = answer_file(tmp_path, "```python\ndef square(x):\n    return x * x\n```\n", "sq.md")
    ran = cli_call("run", "square", "-m", "m", "-d", "replay", "-p", str(code),
                   "--results-dir", str(tmp_path / "r2"), results_dir=out, env=env)
    assert ran.code == 0, ran.stdout + ran.stderr
    assert ran.stdout.count(": pass (1/1 checks)") == 2
