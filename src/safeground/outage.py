"""A database outage, logged as a few lines a person can read, not a traceback per request.

While PostgreSQL is away every request that needs it is refused with a 503 (the scans' route, the
API's handler, Django's last resort), and psycopg's pools log each failed reconnection. At 200
scans/s that was hundreds of lines a second, tracebacks among them, burying anything else. Here
each process logs instead:

    database outage began: <the first error>
    database still down after 10 s: 1,234 requests refused so far
    database back after 25.3 s: 5,012 requests refused

`refused(error)` counts a refusal; the first one has a background thread (safeground.background)
try a connection of its own: if that fails too the outage has begun, and a probe tries again
every PROBE_EVERY seconds and logs the return (so the line comes even if no request arrives).
While `down`, requests are refused at once (safeground.errors.RequestChecks, the scans' route)
instead of each waiting for a pool's connection: the return is noticed within PROBE_EVERY.
`OutageFilter` (settings.LOGGING) drops the per-request records Django and psycopg's pools write
while an outage is logged here.
"""

import logging
import threading
import time
from functools import partial
from typing import Any

from safeground import background

logger = logging.getLogger("safeground.outage")

PROBE_EVERY = 0.5  # seconds between the watcher's connection attempts
STILL_DOWN_EVERY = 10.0  # seconds between "still down" lines


class Outage:
    """One process's view of the database: up, or down since when and with how many refused."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.since: float | None = None  # monotonic time the outage began; None while up
        self.refused_count = 0
        self._said_at = 0.0
        self._checking = False  # a refusal is being checked by a connection of our own
        self.back_at = float("-inf")  # monotonic time the last outage ended

    @property
    def down(self) -> bool:
        return self.since is not None

    @property
    def refusing(self) -> bool:
        """Refuse at once: down, or a request has just been refused and the watcher's own
        connection is finding out whether the outage has begun. Without the second, a request
        arriving in those few milliseconds (one a broken pooled connection refused at once) waited
        out the whole deadline (tests/test_outage.py, under load)."""
        return self.since is not None or self._checking

    def refused(self, error: BaseException | str) -> None:
        """A request refused because the database did not answer. The first starts a check: a
        connection of our own, at once. Only if that fails too is the outage begun (one
        connection a pool kept from before a return, failing once, is no outage)."""
        with self._lock:
            self.refused_count += 1
            now = time.monotonic()
            if self.since is None:
                if not self._checking:
                    self._checking = True
                    self.refused_count = 1
                    background.submit(
                        partial(self._watch, _first_line(error)), name="database outage check"
                    )
            elif now - self._said_at >= STILL_DOWN_EVERY:
                self._said_at = now
                logger.error(
                    "database still down after %.0f s: %d requests refused so far",
                    now - self.since,
                    self.refused_count,
                )

    def back(self) -> None:
        """The database answered again: the outage's last line."""
        with self._lock:
            if self.since is None:
                return
            self.back_at = time.monotonic()
            took, refused = self.back_at - self.since, self.refused_count
            self.since = None
            self.refused_count = 0
        logger.error("database back after %.1f s: %d requests refused", took, refused)

    def recent(self, seconds: float) -> bool:
        """Down now, or back less than `seconds` ago."""
        return self.since is not None or time.monotonic() - self.back_at < seconds

    def _watch(self, first_error: str) -> None:
        began = time.monotonic()
        try:
            if _database_answers():
                return  # a connection that failed once, not an outage
            with self._lock:
                self.since = self._said_at = began
            logger.error("database outage began: %s", first_error)
        finally:
            with self._lock:
                self._checking = False
        self._probe_later()

    def _probe_later(self) -> None:
        # Not waited for between probes: an exit (or a test's settle) during an outage would
        # otherwise wait until the database returned.
        background.later(PROBE_EVERY, self._probe, name="database outage probe", waited_for=False)

    def _probe(self) -> None:
        """While down, one connection attempt every PROBE_EVERY; no thread waits between."""
        if not self.down:
            return
        if _database_answers():
            self.back()
        else:
            self._probe_later()


def _first_line(error: BaseException | str) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def _database_answers() -> bool:
    """One connection of the watcher's own, outside every pool (a pool's connection would be
    one a request is waiting for)."""
    from django.db import connections

    wrapper = connections["default"]
    if wrapper.vendor != "postgresql":
        return True  # SQLite is a file: nothing to watch
    import psycopg

    params = wrapper.get_connection_params()
    params.pop("cursor_factory", None)
    params["connect_timeout"] = 2
    try:
        with psycopg.connect(**params) as probe:
            probe.execute("SELECT 1")
    except psycopg.Error:
        return False
    return True


outage = Outage()


class OutageFilter(logging.Filter):
    """Drops the per-request records of an outage `outage` logs: Django's "Service Unavailable"
    (503) lines and tracebacks, and psycopg's pools' failed (re)connections. A database error
    that reached Django's last resort (met in a middleware) is counted as a refusal here."""

    POOL_NOISE = ("error connecting in", "reconnection attempt in pool")

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("psycopg"):
            return not (outage.refusing and record.getMessage().startswith(self.POOL_NOISE))
        status = getattr(record, "status_code", None)
        if status != 503:
            return True
        error: Any = record.exc_info[1] if record.exc_info else None
        if error is None:
            # The API's 503 for the database counted itself (safeground.api); an overloaded
            # server's own 503 (a request queued too long) is kept when no outage is on.
            return not outage.refusing
        if not _database_error(error):
            return True
        if not getattr(record, "outage_counted", False):  # one count, however many handlers
            record.outage_counted = True
            outage.refused(error)  # met before any view: Django's last resort (urls.server_error)
        return False


def _database_error(error: BaseException) -> bool:
    from django.db import InterfaceError, OperationalError

    return isinstance(error, OperationalError | InterfaceError)
