"""The plain data every stage shares (task, messages, settings, metrics, transcript, verdict,
errors, the check registry); it imports nothing of BenchRig but the leaf text utilities."""
