"""Results → the per-model table, the per-suite scorecards and their exports."""
