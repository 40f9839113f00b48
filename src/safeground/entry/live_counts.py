"""The `entry.counts` live event: at most one per match per SAFEGROUND_ENTRY_COUNTS_EVERY seconds
(default 1) in each process while scans arrive, never one per scan.

The first scan of a quiet match starts a timer; scans until it fires are folded into the one
publish it makes, with counts read fresh from the database when it fires (so the last scan of a
burst is always in a publish at most one interval later: the "final publish after a quiet second").
The counts are read on the timer's thread, never on a scan's, and never take more than
1/COST_SHARE of the time: a match whose counts take 80 ms to read publishes at most every 1.6 s.
A process that no one could hear (in-process fan-out, no control-room socket open in it) does not
read them: at 200,000 tickets a read takes ~90 ms of the database's time, and on a 2-core
server it held up the scans around it.
0 switches the event off (tests).
"""

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import connection

logger = logging.getLogger(__name__)
COST_SHARE = 20  # the interval is at least 20 times what the last read of the counts took


def counts_publish(fixture_id: int) -> None:
    """Read a match's counts and send them to everyone in its control room (not stewards); not
    read at all while no one could hear them (a process with no control-room socket open)."""
    from safeground.live.bus import heard
    from safeground.live.events import publish
    from safeground.matches.models import Fixture

    from .selectors import entry_counts

    if not heard(fixture_id):
        return  # the control room reads them afresh when it opens
    fixture = Fixture.objects.filter(pk=fixture_id).first()
    if fixture is not None:
        publish(fixture_id=fixture_id, type="entry.counts", data=entry_counts(fixture))


class Throttle:
    def __init__(
        self,
        publish: Callable[[int], None] = counts_publish,
        timer: Callable[..., Any] = threading.Timer,
    ) -> None:
        self.publish = publish
        self.timer = timer
        self._pending: set[int] = set()
        self._took: dict[int, float] = {}  # seconds the last publish of a match took
        self._lock = threading.Lock()

    def touch(self, fixture_id: int) -> None:
        every = float(settings.SAFEGROUND_ENTRY_COUNTS_EVERY)
        if every <= 0:
            return
        with self._lock:
            if fixture_id in self._pending:
                return
            self._pending.add(fixture_id)
        delay = max(every, COST_SHARE * self._took.get(fixture_id, 0.0))
        timer = self.timer(delay, self._fire, args=(fixture_id,))
        timer.daemon = True
        timer.start()

    def _fire(self, fixture_id: int) -> None:
        with self._lock:
            self._pending.discard(fixture_id)
        started = time.monotonic()
        try:
            self.publish(fixture_id)
            self._took[fixture_id] = time.monotonic() - started
        except Exception:  # a failed publish must not kill the timer thread silently
            logger.exception("entry.counts for fixture %s not published", fixture_id)
        finally:
            connection.close()  # this thread's own connection (back to the pool)


throttle = Throttle()


def touch(fixture_id: int) -> None:
    throttle.touch(fixture_id)
