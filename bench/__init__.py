"""Benchmarks of BenchRig itself: overhead, measurement fidelity, start-up."""
