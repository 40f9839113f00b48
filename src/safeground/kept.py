"""Values kept a few seconds in a process: the one cache type of the per-process caches.

Each store names the setting that bounds how stale it may be (`Kept("SAFEGROUND_..._SECONDS")`),
so that a change (a revoked key, a moved turnstile, a category edited, a share withdrawn) takes
effect in every process within that time: entry's turnstile lookups (ENTRY), the log's categories,
places and zone maps (LOG), the fixture that deciding who may see a match needs (LIVE_FIXTURE),
the match on now at a ground (MATCH_ON_NOW). 0 keeps nothing for long (the tests').
Only found things are kept: a key that loads None is looked up again each time.

Shared by a process's threads. When an entry expires one thread reloads it while the others go
on with the old value for the moment that takes (no stampede of identical queries every few
seconds at 2,000 scans/s); an entry never outlives its time by more than one reload. A store made
with `one_first_load` also reads a missing key once when many threads ask at once (a reconnect
storm's sockets for one match).

On entry's event loop a lookup is asked for with `cached_only=True`: a hit is answered at once; a
miss raises NotCached and the scan goes to a thread, which loads it. A hit past REFRESH_AT of its
time has its reload queued (`reloads_due`, run on a scan thread) while it still answers, so a
turnstile scanning steadily never meets an expired entry. An entry whose reload met the database
away answers on past its time on the loop and is reloaded at its next use; while an outage is known
(safeground.outage) every entry answers on through it and for one lifetime after it.
"""

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError

from safeground.outage import outage

logger = logging.getLogger(__name__)

# Share of a store's lifetime after which a hit on the loop has its entry reloaded.
REFRESH_AT = 0.5

_reloads: deque[Callable[[], None]] = deque()  # asked for on the loop, run on a scan thread


def reloads_due() -> list[Callable[[], None]]:
    """The reloads the loop has asked for since the last call, for a scan thread to run."""
    due = []
    while _reloads:
        due.append(_reloads.popleft())
    return due


class NotCached(Exception):
    """Asked for with `cached_only=True`, and only the database has it (missing or expired)."""


class Kept:
    """A dict whose entries expire after the seconds its setting names; see the module."""

    def __init__(
        self, setting: str, *, max_entries: int = 1_000, one_first_load: bool = False
    ) -> None:
        self.setting = setting
        self.max_entries = max_entries  # past it the store starts again (keys are few)
        self._data: dict[Hashable, tuple[float, Any]] = {}
        self._loading: set[Hashable] = set()
        # Asked for ahead of time; apart from _loading, so that one never run lets the entry
        # expire as it would have.
        self._reloading: set[Hashable] = set()
        # Whose last reload met the database away: they answer past their time (see above).
        self._away: set[Hashable] = set()
        self._lock = threading.Lock()
        self._first_load = threading.Lock() if one_first_load else None

    def get[V](self, key: Hashable, load: Callable[[], V], *, cached_only: bool = False) -> V:
        now = time.monotonic()
        hit = self._data.get(key)
        if hit is None:
            if cached_only:
                raise NotCached(key)
            if self._first_load is not None:
                return self._load_once(key, load)
        else:
            age, lifetime = now - hit[0], getattr(settings, self.setting)
            if age < lifetime or (cached_only and (key in self._away or outage.recent(lifetime))):
                if cached_only and age >= REFRESH_AT * lifetime:
                    with self._lock:
                        if key not in self._reloading:
                            self._reloading.add(key)
                            _reloads.append(lambda: self._reload(key, load))
                value: V = hit[1]
                return value
            with self._lock:
                if key in self._loading:  # another thread is reloading it
                    stale: V = hit[1]
                    return stale
                if cached_only:
                    raise NotCached(key)
                self._loading.add(key)
        return self._load(key, load, now)

    def _load_once[V](self, key: Hashable, load: Callable[[], V]) -> V:
        assert self._first_load is not None
        with self._first_load:
            hit = self._data.get(key)  # another thread loaded it while this one waited
            if hit is not None and time.monotonic() - hit[0] < getattr(settings, self.setting):
                value: V = hit[1]
                return value
            with self._lock:
                self._loading.add(key)
            return self._load(key, load, time.monotonic())

    def _load[V](self, key: Hashable, load: Callable[[], V], now: float) -> V:
        try:
            loaded = load()
            self._away.discard(key)
            if loaded is not None:
                if len(self._data) >= self.max_entries:
                    self._data.clear()
                self._data[key] = (now, loaded)
            else:
                self._data.pop(key, None)
            return loaded
        finally:
            with self._lock:
                self._loading.discard(key)
                self._reloading.discard(key)

    def _reload(self, key: Hashable, load: Callable[[], Any]) -> None:
        """An entry reloaded ahead of its time (on a scan thread, for the loop)."""
        try:
            self._load(key, load, time.monotonic())
        except Exception as error:
            if isinstance(error, OperationalError | InterfaceError):
                # It answers on, and is reloaded again at the next scan; the outage is logged
                # by safeground.outage, from the scans it refuses, not here per reload.
                self._away.add(key)
            else:
                # The next scan that needs it loads it itself, and meets the error there.
                self._data.pop(key, None)
                logger.warning("reloading %r failed", key, exc_info=True)
            raise  # a scan thread drops a failed connection (runtime.threads.in_scan_thread_soon)

    def put(self, key: Hashable, value: Any) -> None:
        """An entry loaded ahead of its first use (entry's caches_warm)."""
        if len(self._data) >= self.max_entries:
            self._data.clear()
        self._data[key] = (time.monotonic(), value)

    def clear(self) -> None:
        """Drop everything (a test starting afresh; a process that must see a change at once)."""
        with self._lock:
            self._data.clear()
            self._reloading.clear()
            self._away.clear()

    def forget(self, key: Hashable) -> None:
        self._data.pop(key, None)


class KeptCopy:
    """One copy per key of something costly to make that every screen reads (the supporters'
    queue fragment), made again when its version changes, by one thread, and at most once every
    `gap_setting` seconds: during a flood the version changes with every report, and twenty
    screens each asking for a fresh copy made one a screen.

    A reader is given a copy older than the version it read only when a copy was made less than
    a gap ago, and then is told in how many seconds to read again (the time left of the gap),
    when a read makes a fresh one: the screen reads again then (the answer's header, live-1.js),
    since it would otherwise read again only at the next change. Waiting out the gap instead held
    one of the server's few request threads for every screen: with twenty screens open, every
    thread waited and the supporters' reports queued for minutes behind them (ADR 0016). A reader
    waits (without CPU) only for a copy being made. A copy made after a reader read its version
    is as fresh as that version, whatever its label: the reader takes it. `setting` bounds how
    long a copy of an unchanged version serves (what the version does not see, such as a steward
    renamed); 0 makes a copy at every read (the tests').
    """

    def __init__(self, setting: str, gap_setting: str, *, max_entries: int = 256) -> None:
        self.setting, self.gap_setting, self.max_entries = setting, gap_setting, max_entries
        # key -> (version, value, as_of: the monotonic time its version was read, before making)
        self._copies: dict[Hashable, tuple[Hashable, Any, float]] = {}
        self._making: set[Hashable] = set()
        self._changed = threading.Condition()

    def get[V](
        self, key: Hashable, version: Callable[[], Hashable], make: Callable[[], V]
    ) -> tuple[V, bool, float]:
        """The copy for `key`, whether this call made it, and in how many seconds to read again:
        0 when it is as fresh as `version()` now."""
        as_of = time.monotonic()
        seen = version()
        waited = False
        with self._changed:
            while True:
                now = time.monotonic()
                copy = self._copies.get(key)
                if (
                    copy is not None
                    and (copy[0] == seen or copy[2] >= as_of)
                    and now - copy[2] < getattr(settings, self.setting)
                ):
                    value: V = copy[1]
                    return value, False, 0.0
                gap = getattr(settings, self.gap_setting)
                if copy is not None and now - copy[2] < gap:
                    older: V = copy[1]
                    return older, False, gap - (now - copy[2])
                if key in self._making:
                    self._changed.wait(timeout=1.0)  # the maker notifies, even when it fails
                    waited = True
                    continue
                self._making.add(key)
                break
        try:
            if waited:  # the version read before waiting may be older than the data made now
                as_of = time.monotonic()
                seen = version()
            made = make()
            with self._changed:
                if len(self._copies) >= self.max_entries:
                    self._copies.clear()
                self._copies[key] = (seen, made, as_of)
            return made, True, 0.0
        finally:
            with self._changed:
                self._making.discard(key)
                self._changed.notify_all()

    def clear(self) -> None:
        with self._changed:
            self._copies.clear()
