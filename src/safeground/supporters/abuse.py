"""Bounds on what one reporter and one network address may send, counted in the database (so
every server process counts the same reports), and the keyed hashes reporters are known by."""

import hashlib
import hmac
import re
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


def keyed(value: str, purpose: str) -> str:
    """A keyed hash: the same phone, cookie or address gives the same key, and the key alone
    gives none of them back (SECRET_KEY never leaves the server)."""
    message = f"{purpose}:{value}".encode()
    return hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).hexdigest()


def bounds_check(*, reporter: Reporter | None, network: str, now: datetime) -> None:
    """TooManyReports if this reporter (a phone or a device) or this network address has sent
    its bound of reports already."""
    checks = [
        ("reporter", Bound.parse(settings.SAFEGROUND_SUPPORTERS_REPORTER_RATE), "reporter"),
        ("network", Bound.parse(settings.SAFEGROUND_SUPPORTERS_NETWORK_RATE), "network"),
    ]
    for field, bound, column in checks:
        if column == "reporter" and reporter is None:
            continue
        since = now - timedelta(minutes=bound.minutes)
        value = reporter if column == "reporter" else network
        sent = SupporterReport.objects.filter(**{column: value}, received_at__gte=since)
        oldest = sent.order_by("received_at").values_list("received_at", flat=True)
        if sent.count() >= bound.reports:
            first = oldest.first()
            wait = bound.minutes * 60 if first is None else (first - since).total_seconds()
            raise TooManyReports(
                field,
                f"more than {bound.reports} reports from this "
                f"{'phone or device' if column == 'reporter' else 'network'} in "
                f"{bound.minutes} minutes: the control room has them; try again later",
                retry_after=max(1, int(wait) + 1),
            )
