"""The one per-process cache type (safeground.kept): each store is bounded by the setting it
names, keeps only found things, reads a missing key once under a storm when asked to, and
forgets everything on clear()."""

import threading
import time

from safeground.kept import Kept, NotCached


def counted(value):
    calls = []

    def load():
        calls.append(1)
        return value

    return load, calls


def test_each_store_keeps_for_the_seconds_its_setting_names(settings) -> None:
    settings.SAFEGROUND_MATCH_ON_NOW_CACHE_SECONDS = 0.3
    settings.SAFEGROUND_LOG_CACHE_SECONDS = 0.0
    on_now, log = (
        Kept("SAFEGROUND_MATCH_ON_NOW_CACHE_SECONDS"),
        Kept("SAFEGROUND_LOG_CACHE_SECONDS"),
    )
    load, calls = counted("the cup tie")
    assert [on_now.get("ground", load) for _ in range(3)] == ["the cup tie"] * 3
    assert len(calls) == 1
    time.sleep(0.35)
    on_now.get("ground", load)
    assert len(calls) == 2
    log_load, log_calls = counted("block S-L1")
    log.get("S-L1", log_load)
    log.get("S-L1", log_load)
    assert len(log_calls) == 2  # 0: nothing kept for long


def test_nothing_found_is_not_kept_and_clear_forgets(settings) -> None:
    settings.SAFEGROUND_LOG_CACHE_SECONDS = 60.0
    store = Kept("SAFEGROUND_LOG_CACHE_SECONDS")
    missing, missing_calls = counted(None)
    store.get("nobody", missing)
    store.get("nobody", missing)
    assert len(missing_calls) == 2
    load, calls = counted("found")
    store.get("key", load)
    store.clear()
    store.get("key", load)
    assert len(calls) == 2
    store.clear()
    try:
        store.get("key", load, cached_only=True)
    except NotCached:
        pass
    else:
        raise AssertionError("a cleared store answered from nothing")


def test_a_storm_reads_a_missing_key_once_when_the_store_asks(settings) -> None:
    settings.SAFEGROUND_LIVE_FIXTURE_CACHE_SECONDS = 60.0
    store = Kept("SAFEGROUND_LIVE_FIXTURE_CACHE_SECONDS", one_first_load=True)
    calls = []

    def slow_load():
        calls.append(1)
        time.sleep(0.1)
        return "the fixture"

    got = []
    threads = [
        threading.Thread(target=lambda: got.append(store.get(7, slow_load))) for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert got == ["the fixture"] * 8
    assert len(calls) == 1
