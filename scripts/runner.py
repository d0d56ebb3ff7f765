#!/usr/bin/env python3
"""The benchmark-runner's driver: `runner.py --task T --model M [--agent A] [--provider P]`.

Builds the prompt, drives the agent or runtime, stream-parses the metrics, checks the
answer and writes the result JSON, by handing over to `benchrig run`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

DEFAULT_AGENT = "pi"


def parse(argv: list[str]) -> dict[str, Any]:
    """The command line → the options of `benchrig run`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", required=True, help="task id (tasks/<id>.md) or file")
    parser.add_argument("--model", required=True, help="model name, or a .gguf path")
    parser.add_argument("--agent", default=DEFAULT_AGENT,
                        help=f"agent or runtime (default {DEFAULT_AGENT}); see `benchrig list`")
    parser.add_argument("--provider", help="agent provider, runtime base URL, or answer file")
    parser.add_argument("--results-dir", help="where the result file goes")
    parser.add_argument("--pass-env", action="append", default=[], metavar="NAME",
                        help="host variable the agent also gets (repeatable)")
    args = parser.parse_args(argv)
    return {"tasks": [args.task], "model": [args.model], "driver": [args.agent],
            "provider": [args.provider] if args.provider else None,
            "results_dir": Path(args.results_dir) if args.results_dir else None,
            "pass_env": args.pass_env}


if __name__ == "__main__":
    options = parse(sys.argv[1:])
    from benchrig.cli import run_parsed

    run_parsed(**options)
