"""Every bound on how often someone may do something: one rate format, one dict in the settings,
one refusal (ADR 0021).

A limit is named and set in `SAFEGROUND_LIMITS` ("api.person": "1800/m"): N per period, the
period `s`, `m`, `h` or `d`, with a number before it for a longer window ("5/10m": five in ten
minutes), parsed once here, when the settings load. A limit is kept per something: a person, a
network address, a club, a fixture; past it the refusal is `TooManyRequests` (429), which says
when to try again and which every answer writes as `Retry-After`.

Where each thing counted is already a row kept for its own sake (a supporter's report, an
exchange check's record), the caller counts those rows since `Limit.since` and asks
`Limit.over`; `Limit.retry_after` says when the oldest leaves the window. Every process counts
the same, and nothing else is stored. Otherwise (a person's API calls) it counts in Django's cache
(`Limit.count`), in fixed windows of the rate's period: each process's memory, or Redis shared by
every process when REDIS_URL is set.
"""

import logging
import math
import os
import re
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.core.cache import BaseCache, caches
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext, ngettext

PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
RATE = re.compile(r"([1-9][0-9]*)/([1-9][0-9]*)?([smhd])")
CACHE = "limits"

log = logging.getLogger(__name__)
# Every limit the code keeps, by name (tests/api/test_limits.py lists them against the settings).
DECLARED: dict[str, "Limit"] = {}


@dataclass(frozen=True)
class Rate:
    count: int
    seconds: int
    text: str

    @staticmethod
    @lru_cache(maxsize=64)
    def parse(text: str) -> "Rate":
        """ "1800/m", "5/10m", "30/h", "12/d"; ValueError saying the form otherwise."""
        found = RATE.fullmatch(text)
        if found is None:
            raise ValueError(f"{text!r}: N per period, such as 1800/m, 5/10m, 30/h or 12/d")
        return Rate(int(found[1]), int(found[2] or 1) * PERIODS[found[3]], text)

    def __str__(self) -> str:
        return self.text

    def per(self) -> str:
        """The window in words: "a day", "an hour", "in 10 minutes"."""
        unit = next(u for u in "dhms" if self.seconds % PERIODS[u] == 0)
        number = self.seconds // PERIODS[unit]
        if number == 1:
            return {"s": gettext("a second"), "m": gettext("a minute"), "h": gettext("an hour"),
                    "d": gettext("a day")}[unit]  # fmt: skip
        words = {
            "s": ngettext("in %(n)s second", "in %(n)s seconds", number),
            "m": ngettext("in %(n)s minute", "in %(n)s minutes", number),
            "h": ngettext("in %(n)s hour", "in %(n)s hours", number),
            "d": ngettext("in %(n)s day", "in %(n)s days", number),
        }
        return words[unit] % {"n": number}


def limits_read(sources: dict[str, tuple[str, str]]) -> dict[str, str]:
    """SAFEGROUND_LIMITS from the environment: each limit (`name: (variable, default)`) from its
    variable, or its default; ImproperlyConfigured naming the variable whose rate cannot be read
    (the settings are refused as they load)."""
    limits = {}
    for name, (variable, default) in sources.items():
        text = os.environ.get(variable, default)
        try:
            Rate.parse(text)
        except ValueError:
            raise ImproperlyConfigured(
                f"{variable}={text!r}: calls per period (N/s, N/m, N/h or N/d; N/10m is N in ten "
                "minutes), such as 1800/m"
            ) from None
        limits[name] = text
    return limits


# The process's one client of the counts' cache, and the settings it was made from.
_counts: tuple[Any, BaseCache] | None = None


def counts() -> BaseCache:
    """The cache the limits count in, one client per process. Django keeps a cache's client per
    context, and a2wsgi runs each request in a context of its own: `caches[CACHE]` made a new
    client for every API call, and with Redis a new connection (a quarter of a report's time in
    the surge, docs/adr/0021). Made again when the settings change (a test's)."""
    global _counts
    config = settings.CACHES[CACHE]
    made = _counts
    if made is None or made[0] is not config:
        made = _counts = (config, caches.create_connection(CACHE))
    return made[1]


@dataclass(frozen=True)
class Limit:
    """A limit named in SAFEGROUND_LIMITS, read at each use (a test or an operator may change
    it)."""

    name: str

    def __post_init__(self) -> None:
        DECLARED[self.name] = self

    @property
    def rate(self) -> Rate:
        return Rate.parse(settings.SAFEGROUND_LIMITS[self.name])

    def count(self, key: str | int, *, field: str, message: str) -> None:
        """Counts one use by `key` (a person's id, an address); TooManyRequests when that is
        more than the rate allows in this window. (Two processes' uses at one instant are
        counted apart only with Redis: a bound on a runaway client, not a quota.)"""
        rate = self.rate
        now = time.time()
        window = int(now // rate.seconds)
        cache_key = f"limit:{self.name}:{key}:{rate.seconds}:{window}"
        cache = counts()
        try:
            # Counted first, added only at the window's first use: two round trips to Redis for
            # most calls (its incr asks whether the key exists), where adding first made three.
            try:
                used = cache.incr(cache_key)
            except ValueError:  # this window's first use
                if cache.add(cache_key, 1, timeout=rate.seconds + 1):
                    used = 1
                else:  # another process's first use came first
                    used = cache.incr(cache_key)
        except Exception as away:  # Redis away: any of its errors
            # A bound on a runaway client must not refuse the ground's API when the cache
            # cannot answer: the use goes uncounted.
            log.warning("limit %s not counted: %s", self.name, away)
            return
        if used > rate.count:
            # Imported here: the settings read their limits through this module, before the
            # errors' own imports may read the settings.
            from safeground.errors import TooManyRequests

            wait = (window + 1) * rate.seconds - now
            raise TooManyRequests(field, message, retry_after=math.ceil(wait))

    def since(self, now: datetime) -> datetime:
        """From when the uses counted from stored rows count (the window ending now)."""
        return now - timedelta(seconds=self.rate.seconds)

    def over(self, used: int) -> bool:
        """Whether `used` uses already reach the rate, so one more is refused."""
        return used >= self.rate.count

    def retry_after(self, oldest: datetime | None, now: datetime) -> int:
        """Seconds until the oldest use counted (None: none stored yet) leaves the window."""
        if oldest is None:
            return self.rate.seconds
        return max(1, math.ceil((oldest - self.since(now)).total_seconds()))
