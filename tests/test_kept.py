"""The one per-process cache type (safeground.kept): each store is bounded by the setting it
names, keeps only found things, reads a missing key once under a storm when asked to, and
forgets everything on clear(). Its versioned twin (KeptCopy) makes a copy once per version, at
most once a gap, and gives a reader a copy older than the version it read only with the time
to read again, when a fresh one is made."""

import statistics
import threading
import time

from safeground.kept import Kept, KeptCopy, NotCached


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


def test_a_flood_of_versions_is_made_once_a_gap_and_an_older_copy_says_when_to_read_again(
    settings,
) -> None:
    """Twenty screens read while the version changes every few milliseconds (a report a
    hundredth of a second): the copy is made about once a gap, by one reader at a time. A reader
    given a copy older than the version it read is told to read again within the gap, at once
    (it holds no request thread until then), and reading again then gives a copy made from that
    version or a later one."""
    settings.SAFEGROUND_LOG_CACHE_SECONDS = 60.0
    settings.SAFEGROUND_SUPPORTERS_QUEUE_GAP_SECONDS = 0.2
    copies = KeptCopy("SAFEGROUND_LOG_CACHE_SECONDS", "SAFEGROUND_SUPPORTERS_QUEUE_GAP_SECONDS")
    version = [0]
    stop = threading.Event()
    made, making, stale, told = [], [], [], []

    def bump() -> None:
        while not stop.is_set():
            version[0] += 1
            time.sleep(0.005)

    def make() -> int:
        making.append(1)
        assert len(making) == 1, "two readers made the copy at once"
        seen = version[0]
        time.sleep(0.02)
        made.append(seen)
        making.pop()
        return seen

    def screen() -> None:
        while not stop.is_set():
            asked = version[0]
            started = time.monotonic()
            copy, _, again = copies.get("match", lambda: version[0], make)
            if again:
                told.append((again, time.monotonic() - started))
                time.sleep(again)
                copy, _, _ = copies.get("match", lambda: version[0], make)
            if copy < asked:
                stale.append((copy, asked))

    threads = [threading.Thread(target=bump)] + [threading.Thread(target=screen) for _ in range(20)]
    for thread in threads:
        thread.start()
    time.sleep(1.0)
    stop.set()
    for thread in threads:
        thread.join()
    assert not stale
    assert told and all(0 < again <= 0.2 for again, _ in told)
    # Told at once, not after waiting out the gap (a render is 0.02 s, the gap 0.2 s).
    assert statistics.median(waited for _, waited in told) < 0.06
    assert 3 <= len(made) <= 7  # once a gap (0.2 s) in a second, not once a read


def test_an_unchanged_version_is_one_copy_and_a_change_is_made_at_the_next_read(settings) -> None:
    settings.SAFEGROUND_LOG_CACHE_SECONDS = 60.0
    settings.SAFEGROUND_SUPPORTERS_QUEUE_GAP_SECONDS = 0.0
    copies = KeptCopy("SAFEGROUND_LOG_CACHE_SECONDS", "SAFEGROUND_SUPPORTERS_QUEUE_GAP_SECONDS")
    version, calls = ["v1"], []

    def make() -> str:
        calls.append(1)
        return f"fragment {version[0]}"

    assert copies.get("k", lambda: version[0], make) == ("fragment v1", True, 0.0)
    assert copies.get("k", lambda: version[0], make) == ("fragment v1", False, 0.0)
    version[0] = "v2"
    assert copies.get("k", lambda: version[0], make) == ("fragment v2", True, 0.0)
    assert len(calls) == 2
