#!/usr/bin/env python3
"""The benchmark-runner's driver: `runner.py --task T --model M [--agent A] [--provider P]`.

Builds the prompt, drives the agent or runtime, stream-parses the metrics, checks the
answer and writes the result JSON, by handing over to `benchrig run`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

DEFAULT_AGENT = "pi"


def parse(argv: list[str]) -> list[str]:
    """The command line → the same attempt as a `benchrig run` command line."""
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
    # `--opt=value`: a value that starts with a dash stays the option's value
    run = ["run", f"--model={args.model}", f"--driver={args.agent}"]
    if args.provider:
        run.append(f"--provider={args.provider}")
    if args.results_dir:
        run.append(f"--results-dir={args.results_dir}")
    run += [f"--pass-env={name}" for name in args.pass_env]
    return [*run, "--", args.task]


if __name__ == "__main__":
    from benchrig.cli import main

    main(parse(sys.argv[1:]))
