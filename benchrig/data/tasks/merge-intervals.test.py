"""Acceptance tests for merge-intervals: 5 checks."""

from solution import merge_intervals


def pairs(result):
    """Accept tuples as well as lists for each pair; the values must be exact."""
    return [list(item) for item in result]


def test_overlapping_intervals_merge():
    merged = merge_intervals([[1, 3], [2, 6], [8, 10], [15, 18]])
    assert pairs(merged) == [[1, 6], [8, 10], [15, 18]]


def test_unsorted_input():
    merged = merge_intervals([[8, 10], [1, 3], [15, 18], [2, 6]])
    assert pairs(merged) == [[1, 6], [8, 10], [15, 18]]


def test_touching_intervals_merge():
    assert pairs(merge_intervals([[1, 4], [4, 5]])) == [[1, 5]]
    assert pairs(merge_intervals([[5, 7], [1, 2], [2, 5]])) == [[1, 7]]


def test_contained_intervals():
    assert pairs(merge_intervals([[1, 10], [2, 3], [4, 8]])) == [[1, 10]]
    assert pairs(merge_intervals([[2, 3], [1, 10], [11, 12]])) == [[1, 10], [11, 12]]


def test_edge_cases():
    assert pairs(merge_intervals([])) == []
    assert pairs(merge_intervals([[5, 5]])) == [[5, 5]]
    assert pairs(merge_intervals([[-3, -1], [-2, 0], [7, 7]])) == [[-3, 0], [7, 7]]
