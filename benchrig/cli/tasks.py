"""`benchrig validate` and `benchrig list`, and the tasks a command line names."""

from __future__ import annotations

from typing import Annotated

from typer import Argument, Exit, echo

from benchrig.cli.app import _tasks, app
from benchrig.textsafe import printable
from benchrig.ui import error


@app.command(short_help="Check task files against the task schema.")
def validate(
    paths_: Annotated[list[str] | None, Argument(metavar="[PATHS]...",
        help="Task files, ids or folders (default: tasks/).")] = None,
) -> None:
    """Check task files and their tests against schema/task.schema.json, and every row of a
    dataset task (exit 2 on error)."""
    loaded = _tasks(paths_ or [])
    files = len({task.path for task in loaded})
    samples = sum(task.sample_id is not None for task in loaded)
    echo(f"{files} task(s) valid" + (f" ({samples} samples)" if samples else ""))



@app.command("list", short_help="The tasks, the imported packs and the drivers.")
def list_() -> None:
    """The bundled tasks, the imported packs and the registered drivers."""
    from benchrig.core.errors import TaskError
    from benchrig.drivers import known
    from benchrig.packs import installed
    from benchrig.spec import load_samples, task_paths

    broken = 0
    for path in task_paths():  # one bad file is named, and hides no other task
        try:
            samples = load_samples(path)  # a dataset task: every row checked, counted
        except TaskError as exc:
            broken += 1
            for problem in exc.problems:
                error(printable(problem))
            continue
        task = samples[0]
        title = (f"{printable(str(task.dataset_path.name))}: {len(samples)} samples"
                 if task.dataset_path is not None else printable(task.title))
        echo(f"{task.suite:10} {task.id:20} {task.difficulty:7} {title}")
    for name, meta in installed().items():
        echo(f"{'pack':10} {printable(name):20} {meta.get('problems')} tasks, "
                   f"{printable(str(meta.get('suite')))} (--pack {printable(name)})")
    echo(f"\ndrivers: {', '.join(known())}")
    if broken:
        raise Exit(2)
