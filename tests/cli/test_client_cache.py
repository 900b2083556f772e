"""ResultCache honours ttlMs and cacheScope (spec §6)."""

from __future__ import annotations

from rondo.client.cache import ResultCache


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def test_fresh_until_ttl_then_gone() -> None:
    clock = Clock()
    cache = ResultCache(clock)
    cache.put("tools/list", None, {"tools": [], "ttlMs": 1000, "cacheScope": "public"})
    clock.now = 0.999
    assert cache.get("tools/list", None) == {"tools": [], "ttlMs": 1000, "cacheScope": "public"}
    clock.now = 1.0
    assert cache.get("tools/list", None) is None
    assert len(cache) == 0


def test_zero_negative_or_missing_ttl_is_never_stored() -> None:
    cache = ResultCache(Clock())
    for ttl in (0, -5, None, "100", True):
        cache.put("tools/list", None, {"tools": [], "ttlMs": ttl})
    assert len(cache) == 0


def test_pages_and_keys_are_separate() -> None:
    cache = ResultCache(Clock())
    cache.put("tools/list", None, {"page": 1, "ttlMs": 10})
    cache.put("tools/list", "", {"page": 2, "ttlMs": 10})
    cache.put("resources/read", "a://x", {"contents": [], "ttlMs": 10})
    assert cache.get("tools/list", "")["page"] == 2
    cache.invalidate("tools/list")
    assert cache.get("tools/list", None) is None and cache.get("resources/read", "a://x") is not None


def test_private_entries_leave_with_the_credentials() -> None:
    cache = ResultCache(Clock())
    cache.put("tools/list", None, {"ttlMs": 10, "cacheScope": "public"})
    cache.put("prompts/list", None, {"ttlMs": 10, "cacheScope": "private"})
    cache.put("resources/list", None, {"ttlMs": 10})  # no scope: private, the safe reading
    cache.drop_private()
    assert cache.get("tools/list", None) is not None
    assert cache.get("prompts/list", None) is None and cache.get("resources/list", None) is None
