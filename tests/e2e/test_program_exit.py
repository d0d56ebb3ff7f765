"""The CLI ends its process as soon as its last line is written: what is registered to run at
exit runs, and output is flushed, but the interpreter's teardown (freeing every module one by
one, a last collection: 50–70 ms after `benchrig run`'s last line) is skipped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, SOLUTIONS, answer_file, fenced

# A marker whose __del__ runs only in the interpreter's teardown, and a handler at exit.
MARKERS = r"""
import atexit, os, sys
class Teardown:
    def __del__(self):
        os.write(1, b"teardown ran\n")
marker = Teardown()
atexit.register(lambda: print("atexit ran"))
"""


def run_python(program: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", program, *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=300, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_the_program_ends_after_its_exit_handlers_without_the_teardown() -> None:
    done = run_python(MARKERS + (
        "from benchrig.cli import as_program\n"
        "def command():\n"
        "    print('last line', end='')  # still in the buffer: flushed before the end\n"
        "    sys.exit(3)\n"
        "as_program(command)\n"))
    assert (done.returncode, done.stdout) == (3, "last lineatexit ran\n"), done.stderr


def test_a_thread_still_at_work_gets_the_usual_exit() -> None:
    done = run_python(MARKERS + (
        "import threading, time\n"
        "from benchrig.cli import as_program\n"
        "def command():\n"
        "    threading.Thread(target=time.sleep, args=(0.2,)).start()\n"
        "    sys.exit(4)\n"
        "as_program(command)\n"))
    assert done.returncode == 4
    assert done.stdout == "atexit ran\nteardown ran\n", done.stderr


def test_benchrig_run_and_runner_py_end_without_the_teardown(tmp_path: Path) -> None:
    answer = answer_file(tmp_path, fenced((SOLUTIONS / "lru-cache.py").read_text()))
    results = str(tmp_path / "results")
    cli = run_python(MARKERS + "from benchrig.cli import main\nmain()\n", "run", "lru-cache",
                     "-m", "oracle", "-d", "replay", "-p", str(answer), "--runs", "2",
                     "--results-dir", results)
    script = run_python(MARKERS + (
        "import runpy\n"
        f"sys.argv = ['runner.py', '--task', 'lru-cache', '--model', 'oracle', '--agent', "
        f"'replay', '--provider', {str(answer)!r}, '--results-dir', {results!r}]\n"
        f"runpy.run_path({str(ROOT / 'scripts' / 'runner.py')!r}, run_name='__main__')\n"))
    for done in (cli, script):
        assert done.returncode == 0, done.stderr[-2000:]
        assert "lru-cache oracle replay: pass (2/2 checks)" in done.stdout
        assert done.stdout.endswith("atexit ran\n")  # after the table, and nothing after it
        assert "teardown ran" not in done.stdout
    assert len(list(Path(results).glob("*.json"))) == 3  # every result was written
