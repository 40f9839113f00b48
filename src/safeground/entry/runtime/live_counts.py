"""The `entry.counts` live event: at most one per match per SAFEGROUND_ENTRY_COUNTS_EVERY seconds
(default 1) in each process while scans arrive, never one per scan.

The first scan of a quiet match starts a timer; scans until it fires are folded into the one
publish it makes, with counts read fresh from the database when it fires (so the last scan of a
burst is always in a publish at most one interval later: the "final publish after a quiet second").
The counts are read on a background thread (safeground.background.later), never on a scan's,
and never take more than 1/COST_SHARE of the time: a match whose counts take 80 ms to read
publishes at most every 1.6 s.
A process that no one could hear (in-process fan-out, no control-room socket open in it) does not
read them: at 200,000 tickets a read takes ~90 ms of the database's time, and on a 2-core
server it held up the scans around it. In Redis mode every process's sockets get every publish,
so one process per interval reads them (the first to claim it in Redis); another whose timer
fires meanwhile tries again when that interval ends, so its scans are in a publish at most two
intervals later. 0 switches the event off (tests).
"""

import functools
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection

from safeground import background
from safeground.outage import outage

logger = logging.getLogger(__name__)
COST_SHARE = 20  # the interval is at least 20 times what the last read of the counts took


def counts_publish(fixture_id: int) -> float | None:
    """Read a match's counts and send them to everyone in its control room (not stewards); not
    read at all while no one could hear them (a process with no control-room socket open). In
    Redis mode one process reads them per interval: the others get the seconds until they may
    try again, and try then (so their own scans are in a publish read after them)."""
    from safeground.live.bus import heard
    from safeground.live.catalogue import ENTRY_COUNTS
    from safeground.live.events import publish
    from safeground.matches.models import Fixture

    from ..selectors import entry_counts

    if not heard(fixture_id):
        return None  # the control room reads them afresh when it opens
    wait = _claim(fixture_id)
    if wait:
        return wait
    fixture = Fixture.objects.filter(pk=fixture_id).first()
    if fixture is not None:
        publish(fixture_id=fixture_id, type=ENTRY_COUNTS, data=entry_counts(fixture))
    return None


def _claim(fixture_id: int) -> float:
    """0 if this process may read the match's counts now; else the seconds until it may. In Redis
    mode the counts reach every process's sockets and are the same whoever reads them, so the
    first process of each interval takes it (SET NX with the interval as its expiry)."""
    url = settings.REDIS_URL
    if not url:
        return 0.0
    from safeground.live.transport import redis_client

    client = redis_client(url)
    key = f"safeground:entry-counts:{fixture_id}"
    every_ms = max(1, round(1000 * float(settings.SAFEGROUND_ENTRY_COUNTS_EVERY)))
    if client.set(key, os.getpid(), nx=True, px=every_ms):
        return 0.0
    left_ms = client.pttl(key)  # -2: expired meanwhile
    return max(int(left_ms), 10) / 1000


def _counts_every() -> float:
    return float(settings.SAFEGROUND_ENTRY_COUNTS_EVERY)


class Throttle:
    """At most one `publish(fixture_id)` per match every `every()` seconds while it is touched,
    on a background thread; `publish` may return the seconds after which to run again (another
    process's turn, or a gate warning still standing: entry.gate_pressure)."""

    def __init__(
        self,
        publish: Callable[[int], float | None] = counts_publish,
        later: Callable[[float, Callable[[], None]], Any] | None = None,
        every: Callable[[], float] = _counts_every,
        name: str = "entry counts",
    ) -> None:
        self.publish = publish
        self.later = later or (lambda seconds, work: background.later(seconds, work, name=name))
        self.every = every
        self.name = name
        self._pending: set[int] = set()
        self._took: dict[int, float] = {}  # seconds the last publish of a match took
        self._lock = threading.Lock()

    def touch(self, fixture_id: int, delay: float | None = None) -> None:
        every = self.every()
        if every <= 0:
            return
        with self._lock:
            if fixture_id in self._pending:
                return
            self._pending.add(fixture_id)
        if delay is None:
            delay = max(every, COST_SHARE * self._took.get(fixture_id, 0.0))
        self.later(delay, functools.partial(self._fire, fixture_id))

    def _fire(self, fixture_id: int) -> None:
        with self._lock:
            self._pending.discard(fixture_id)
        started = time.monotonic()
        retry = None
        try:
            retry = self.publish(fixture_id)
            if retry is None:
                self._took[fixture_id] = time.monotonic() - started
        except (OperationalError, InterfaceError) as error:  # said by safeground.outage
            outage.refused(error)
        except Exception:  # a failed publish is said, and the next scan tries again
            logger.exception("%s for fixture %s not published", self.name, fixture_id)
        finally:
            connection.close()  # this thread's own connection (back to the pool)
        if retry is not None:  # another process reads them this interval: try after it
            self.touch(fixture_id, delay=retry)


throttle = Throttle()


def touch(fixture_id: int) -> None:
    throttle.touch(fixture_id)
