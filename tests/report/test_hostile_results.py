"""A results folder someone else could write into: a file nested 100,000 deep, a `.json` link
to /dev/zero, a FIFO, a folder, a file past the size cap. Every command that reads results
skips each of them with a warning naming it, and still summarizes the rest."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchrig.resultio.files import load_results
from tests.conftest import benchrig, cli_call
from tests.helpers.result_sets import attempt, write

DEEP = b"[" * 100_000 + b"]" * 100_000
HUGE = 64 << 20  # bytes: far past any result BenchRig writes
# The reading commands, each with how it shows the one good result.
COMMANDS = [(("summary",), "alpha"), (("summary", "--format", "csv"), "alpha"),
            (("summary", "--format", "markdown"), "alpha"),
            (("summary", "--format", "csv", "--per-attempt"), "alpha"),
            (("compare", "alpha", "beta"), "alpha"), (("report",), "results")]


def plant(folder: Path, name: str) -> None:
    """One hostile file, by its name."""
    if name == "deep.json":
        (folder / name).write_bytes(DEEP)
    elif name == "objects.json":
        (folder / name).write_bytes(b'{"a":' * 100_000 + b"1" + b"}" * 100_000)
    elif name == "zero.json":
        (folder / name).symlink_to("/dev/zero")
    elif name == "fifo.json":
        os.mkfifo(folder / name)
    elif name == "folder.json":
        (folder / name).mkdir()
    elif name == "huge.json":
        with (folder / name).open("wb") as out:
            out.truncate(HUGE)  # sparse: the size alone refuses it
    else:
        (folder / name).write_text("{}")


HOSTILE = ["deep.json", "objects.json", "zero.json", "fifo.json", "folder.json", "huge.json"]
ODD_NAME = "name\x1b[2Jcleared.json"


def good_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two good results in a folder not under `tmp_path`: the schema-agreement fixture of
    conftest reads every .json file there as it is, and would hang on a FIFO."""
    return write(tmp_path_factory.mktemp("hostile") / "results",
                 [attempt("alpha", "t1", "pass"), attempt("beta", "t1", "fail")])


@pytest.fixture
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The good results beside every kind of hostile file."""
    folder = good_results(tmp_path_factory)
    for name in [*HOSTILE, ODD_NAME]:
        plant(folder, name)
    return folder


@pytest.mark.parametrize("name", HOSTILE)
def test_one_hostile_file_is_skipped_and_the_rest_summarized(
        tmp_path_factory: pytest.TempPathFactory, name: str) -> None:
    folder = good_results(tmp_path_factory)
    plant(folder, name)
    ran = benchrig("summary", str(folder), results_dir=folder, timeout=60)  # a hang fails
    assert ran.code == 0 and "Traceback" not in ran.stderr, ran.stderr
    assert "alpha" in ran.stdout and "beta" in ran.stdout
    assert f"warning: {folder / name}: skipped" in ran.stderr


def test_the_reader_skips_each_hostile_file_and_reads_the_rest(hostile: Path) -> None:
    loaded = load_results([hostile])
    assert sorted(r["model"] for r in loaded.results) == ["alpha", "beta"]
    why = {path.name: reason for path, reason in loaded.rejected}
    assert sorted(why) == sorted([*HOSTILE, ODD_NAME])
    assert why["deep.json"] == why["objects.json"] == "nested more than 100 deep"
    assert why["zero.json"] == "a symbolic link, not a regular file"
    assert why["fifo.json"] == "a FIFO, not a regular file"
    assert why["folder.json"] == "a folder, not a regular file"
    assert why["huge.json"].startswith(f"{HUGE:,} bytes, over the cap")
    # named one by one, as a shell glob names them, they are refused alike (a folder named
    # is a folder of results, here an empty one)
    again = load_results(sorted(hostile.iterdir()))
    assert len(again.results) == 2 and len(again.rejected) == len(loaded.rejected) - 1


@pytest.mark.parametrize(("command", "shows"), COMMANDS, ids=[" ".join(c) for c, _ in COMMANDS])
def test_every_reading_command_summarizes_the_folder_around_them(
        hostile: Path, command: tuple[str, ...], shows: str) -> None:
    extra = ("--html", str(hostile.parent / "report.html")) if command[0] == "report" else ()
    where = 3 if command[0] == "compare" else 1  # compare A B [PATHS]
    # in this process (a hang on the FIFO is the reader's, timed out above in a process)
    ran = cli_call(*command[:where], str(hostile), *command[where:], *extra,
                   results_dir=hostile)
    assert ran.code == 0, ran.stderr
    assert "Traceback" not in ran.stderr and shows in ran.stdout
    for name in HOSTILE:
        assert f"warning: {hostile / name}: skipped" in ran.stderr
    assert "name\\x1b[2Jcleared.json: skipped" in ran.stderr  # the name shown, not obeyed
    assert "\x1b" not in ran.stderr


def test_nesting_is_measured_outside_strings_and_within_the_limit() -> None:
    from benchrig.resultio.files import nested_deeper

    assert not nested_deeper(b'{"a": "' + b"[" * 500 + b'"}', 10)  # brackets in a string
    assert not nested_deeper(b"[" * 10 + b"]" * 10, 10)
    assert nested_deeper(b"[" * 11 + b"]" * 11, 10)
    assert nested_deeper(b'[{"a": [{"b": "\\"]"}]}]', 3)  # an escaped quote is no string end
    assert not nested_deeper(b"]" * 50 + b"[" * 50, 10)  # not JSON: the parser says so
    assert nested_deeper(b"[1," * 1000 + b"]" * 1000, 100)  # values between brackets


def test_a_folder_lists_what_its_glob_lists_in_the_same_order(hostile: Path) -> None:
    """The reader lists a folder by name instead of a Path per file: the same files, hostile
    ones, dotfiles and odd names included, in the same order, EXAMPLE.json left out."""
    from benchrig.resultio.files import EXAMPLE, _listed

    for name in (".hidden.json", "UPPER.JSON", "notes.txt", EXAMPLE, "a.json.bak", "0.json"):
        (hostile / name).write_text("{}")
    globbed = [str(p) for p in sorted(hostile.glob("*.json"), key=lambda p: p.name)
               if p.name != EXAMPLE]
    assert _listed([hostile]) == globbed and str(hostile / ".hidden.json") in globbed
    assert _listed([hostile / EXAMPLE, hostile / "0.json", hostile]) == \
        [str(hostile / "0.json"), *globbed]
    loaded = load_results([hostile])
    assert all(isinstance(path, Path) for path, _ in loaded.rejected)
