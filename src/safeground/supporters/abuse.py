"""Bounds on what one reporter and one network address may send, counted in the database (so
every server process counts the same reports), and the keyed hashes reporters are known by."""

import hashlib
import hmac
import re
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings

from safeground.errors import SafegroundError

from .models import Reporter, SupporterReport

RATE = re.compile(r"([1-9][0-9]*)/([1-9][0-9]*)m")


class TooManyReports(SafegroundError):
    """Over a bound: answered 429 with Retry-After, saying which bound and when to try again."""

    code = "too_many_reports"
    status = 429

    def __init__(self, field: str, message: str, retry_after: int) -> None:
        super().__init__(field, message)
        self.retry_after = retry_after


@dataclass(frozen=True)
class Bound:
    reports: int
    minutes: int

    @classmethod
    def parse(cls, rate: str) -> "Bound":
        """ "5/10m": five reports in ten minutes (settings are checked when they load)."""
        found = RATE.fullmatch(rate)
        if found is None:
            raise ValueError(f"{rate!r}: reports per minutes, such as 5/10m")
        return cls(int(found[1]), int(found[2]))


def bounds() -> dict[str, Bound]:
    return {
        "reporter": Bound.parse(settings.SAFEGROUND_SUPPORTERS_REPORTER_RATE),
        "network": Bound.parse(settings.SAFEGROUND_SUPPORTERS_NETWORK_RATE),
    }


def bounds_since(now: datetime) -> tuple[datetime, datetime]:
    """From when a reporter's and a network address's reports count towards their bounds."""
    reporter, network = bounds().values()
    return now - timedelta(minutes=reporter.minutes), now - timedelta(minutes=network.minutes)


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
        self.bounds = bounds()
        self.counts: dict[str, Counter[str]] = {"reporter": by_reporter, "network": by_network}
        self.reporters = reporters

    def _since(self, column: str) -> datetime:
        return self.now - timedelta(minutes=self.bounds[column].minutes)

    def admit(self, *, key: str, network: str) -> None:
        """TooManyReports if this reporter (a phone or a device) or this network address has sent
        its bound of reports already; else the report is counted."""
        for column, value in (("reporter", key), ("network", network)):
            if value == "":
                continue
            bound = self.bounds[column]
            if self.counts[column][value] >= bound.reports:
                raise TooManyReports(
                    column,
                    f"more than {bound.reports} reports from this "
                    f"{'phone or device' if column == 'reporter' else 'network'} in "
                    f"{bound.minutes} minutes: the control room has them; try again later",
                    retry_after=self._retry_after(column, value),
                )
        self.counts["reporter"][key] += 1
        if network:
            self.counts["network"][network] += 1

    def _retry_after(self, column: str, value: str) -> int:
        """Seconds until the oldest report counted leaves the bound's window."""
        since = self._since(column)
        if column == "network":
            sent = SupporterReport.objects.filter(network=value)
        elif value in self.reporters:
            sent = SupporterReport.objects.filter(reporter=self.reporters[value])
        else:  # a new device over its bound within one batch: nothing written yet
            sent = SupporterReport.objects.none()
        oldest = (
            sent.filter(received_at__gte=since)
            .order_by("received_at")
            .values_list("received_at", flat=True)
            .first()
        )
        window = self.bounds[column].minutes * 60
        wait = window if oldest is None else (oldest - since).total_seconds()
        return max(1, int(wait) + 1)
