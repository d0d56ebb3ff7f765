"""Acceptance tests for lru-cache: 2 checks."""

from solution import LRUCache


def test_get_put_and_eviction():
    cache = LRUCache(2)
    cache.put(1, 1)
    cache.put(2, 2)
    assert cache.get(1) == 1
    cache.put(3, 3)  # evicts key 2, the least recently used
    assert cache.get(2) == -1
    cache.put(4, 4)  # evicts key 1
    assert cache.get(1) == -1
    assert cache.get(3) == 3
    assert cache.get(4) == 4


def test_updates_refresh_recency():
    cache = LRUCache(2)
    cache.put(1, 10)
    cache.put(2, 20)
    cache.put(1, 11)  # update: key 1 becomes the most recently used
    cache.put(3, 30)  # evicts key 2
    assert cache.get(2) == -1
    assert cache.get(1) == 11
    assert cache.get(3) == 30
    one = LRUCache(1)
    one.put(5, 50)
    one.put(6, 60)
    assert one.get(5) == -1
    assert one.get(6) == 60
