"""The plain data every stage shares (task, messages, settings, metrics, transcript, verdict,
errors, the Check type); it imports nothing of BenchRig but the leaf text utilities."""
