"""Attempts, run: one attempt and the matrix (runner), an attempt in a remote worker (remote)."""
