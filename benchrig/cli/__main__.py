"""`python -m benchrig.cli`: the `benchrig` command."""

from benchrig.cli import main

main()
