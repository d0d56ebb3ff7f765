"""Checks turn a transcript into a verdict: acceptance tests for code, rules for answers."""
