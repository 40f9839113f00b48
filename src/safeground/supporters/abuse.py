"""Bounds on what one reporter and one network address may send, counted in the database (so
every server process counts the same reports), and the keyed hashes reporters are known by."""

import hashlib
import hmac
from collections import Counter
from datetime import datetime

from django.conf import settings

from safeground.errors import TooManyRequests
from safeground.limits import Limit

from .models import Reporter, SupporterReport


class TooManyReports(TooManyRequests):
    """Over a bound: answered 429 with Retry-After, saying which bound and when to try again."""

    code = "too_many_reports"


# A phone or device's reports, and a network address's (SAFEGROUND_LIMITS).
LIMITS = {"reporter": Limit("supporters.reporter"), "network": Limit("supporters.network")}


def bounds_since(now: datetime) -> tuple[datetime, datetime]:
    """From when a reporter's and a network address's reports count towards their bounds."""
    return LIMITS["reporter"].since(now), LIMITS["network"].since(now)


def keyed(value: str, purpose: str) -> str:
    """A keyed hash: the same phone, cookie or address gives the same key, and the key alone
    gives none of them back (SECRET_KEY never leaves the server)."""
    message = f"{purpose}:{value}".encode()
    return hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).hexdigest()


class Sent:
    """What each reporter (by key) and each network address of a batch sent within its bound
    (counted by the caller in one statement: queue_rows.reporters_and_sent, from `since`);
    `admit` lets a report through or refuses it, counting the batch's own reports as they are
    let through.

    A text has no network address: its bound is its phone's alone (counting every text's empty
    address together would refuse the whole text line after NETWORK_RATE texts)."""

    def __init__(
        self,
        *,
        reporters: dict[str, Reporter],
        by_reporter: Counter[str],
        by_network: Counter[str],
        now: datetime,
    ):
        self.now = now
        self.counts: dict[str, Counter[str]] = {"reporter": by_reporter, "network": by_network}
        self.reporters = reporters

    def admit(self, *, key: str, network: str) -> None:
        """TooManyReports if this reporter (a phone or a device) or this network address has sent
        its bound of reports already; else the report is counted."""
        for column, value in (("reporter", key), ("network", network)):
            if value == "":
                continue
            limit = LIMITS[column]
            if limit.over(self.counts[column][value]):
                rate = limit.rate
                raise TooManyReports(
                    column,
                    f"more than {rate.count} reports from this "
                    f"{'phone or device' if column == 'reporter' else 'network'} in "
                    f"{rate.seconds // 60} minutes: the control room has them; try again later",
                    retry_after=self._retry_after(column, value),
                )
        self.counts["reporter"][key] += 1
        if network:
            self.counts["network"][network] += 1

    def _retry_after(self, column: str, value: str) -> int:
        """Seconds until the oldest report counted leaves the bound's window."""
        limit = LIMITS[column]
        if column == "network":
            sent = SupporterReport.objects.filter(network=value)
        elif value in self.reporters:
            sent = SupporterReport.objects.filter(reporter=self.reporters[value])
        else:  # a new device over its bound within one batch: nothing written yet
            sent = SupporterReport.objects.none()
        oldest = (
            sent.filter(received_at__gte=limit.since(self.now))
            .order_by("received_at")
            .values_list("received_at", flat=True)
            .first()
        )
        return limit.retry_after(oldest, self.now)
