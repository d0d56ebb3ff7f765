"""`benchrig view`: the results browser served on 127.0.0.1, read only, until Ctrl-C."""

from __future__ import annotations

from typing import Annotated

from typer import Option, echo

from benchrig import paths
from benchrig.cli.app import app
from benchrig.cli.results import (
    Labels,
    Models,
    ResultPaths,
    Since,
    Suites,
    _results,
    pack_lines,
)
from benchrig.ui import info

ROWS_FIRST_S = 2.0  # seconds the report part waits for a page to fetch its rows


@app.command(short_help="Browse results in a browser, served on 127.0.0.1.")
def view(
    paths_: ResultPaths = None,
    port: Annotated[int, Option(min=0, max=65535,
        help="Port on 127.0.0.1 (0: a free one).")] = 0,
    model: Models = None, suite: Suites = None, label: Labels = None, since: Since = None,
) -> None:
    """Serve the report with its sample browser on 127.0.0.1: every attempt's details and
    transcript on demand, read only (nothing is written). Ctrl-C stops it."""
    import signal
    import threading

    from benchrig.packs.scores import pack_tasks
    from benchrig.report.build import build
    from benchrig.report.render_html import render_html, render_shell
    from benchrig.report.view_server import Site, server, sidecars

    given = paths_ or [paths.results_dir()]
    folders = [p if p.is_dir() else p.parent for p in given]
    # Listen first: the page's shell is served at once, its rows and its report part as
    # soon as they are made (a request for them waits), each made once.
    found = sum(1 for p in given for _ in (p.glob("*.json") if p.is_dir() else (p,)))
    site = Site(render_shell(found).encode())
    made = server(site, port)
    # a stop is seen within 50 ms (serve_forever's default waits up to 0.5 s for it)
    serving = threading.Thread(target=made.serve_forever, kwargs={"poll_interval": 0.05},
                               daemon=True)

    def interrupt(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)  # a supervisor's stop is a clean stop too
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started with it ignored
    try:
        serving.start()
        host, bound = made.server_address[:2]
        echo(f"http://{host!s}:{bound}/")
        results = _results(given, model, suite, label, since, None)  # none: exit 1
        site.set_results(results, sidecars(results, folders))
        # the rows first: a page opened now gets them before the report part takes the
        # CPU (2 shared cores), but no longer than ROWS_FIRST_S
        site.rows_sent.wait(ROWS_FIRST_S)
        site.set_report(render_html(build(results, pack_tasks()), served=True,
                                    packs=pack_lines(results)).encode())
        info(f"{len(results)} results; read only; Ctrl-C stops it")
        while serving.is_alive():
            serving.join(0.5)
    except KeyboardInterrupt:
        info("stopped")
    finally:
        if serving.is_alive():
            made.shutdown()
        made.server_close()
