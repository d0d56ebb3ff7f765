"""`benchrig view`: the results browser served on 127.0.0.1, read only, until Ctrl-C."""

from __future__ import annotations

from typing import Annotated

from benchrig import paths
from benchrig.cli.app import Option, app, echo
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

    from benchrig.report.build import build
    from benchrig.report.render_html import render_html
    from benchrig.report.view_server import Site, server, sidecars

    given = paths_ or [paths.results_dir()]
    results = _results(given, model, suite, label, since, None)
    folders = [p if p.is_dir() else p.parent for p in given]
    page = render_html(build(results), served=True, packs=pack_lines(results)).encode()
    made = server(Site(page, results, sidecars(results, folders)), port)

    def interrupt(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)  # a supervisor's stop is a clean stop too
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started with it ignored
    host, bound = made.server_address[:2]
    echo(f"http://{host!s}:{bound}/")
    info(f"{len(results)} results; read only; Ctrl-C stops it")
    try:
        made.serve_forever()
    except KeyboardInterrupt:
        info("stopped")
    finally:
        made.server_close()

