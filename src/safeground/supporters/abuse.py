"""Bounds on what one reporter and one network address may send, counted in the database (so
every server process counts the same reports), and the keyed hashes reporters are known by."""

import hashlib
import hmac
from collections import Counter
from datetime import datetime

from django.conf import settings
from django.utils.translation import gettext as _

from safeground.errors import TooManyRequests
from safeground.limits import Limit, Rate

from .models import Reporter, SupporterReport


class TooManyReports(TooManyRequests):
    """Over a bound: answered 429 with Retry-After, saying which bound and when to try again.
    `field` is the bound's ("reporter": the phone or device, "network": the address); `urgent`
    says it was the most severe categories' own, higher bound (LIFE_BOUNDS)."""

    code = "too_many_reports"

    def __init__(self, field: str, message: str, *, retry_after: int, urgent: bool, rate: Rate):
        super().__init__(field, message, retry_after=retry_after)
        self.urgent = urgent
        self.rate = rate


# A phone or device's reports, and a network address's (SAFEGROUND_LIMITS). A report of a life at
# risk (categories.LIFE: medical help, a crush) is held to its own, much higher bounds instead:
# a phone that used its allowance on a stand's flood can still report the man collapsed beside it.
LIMITS = {
    "reporter": Limit("supporters.reporter"),
    "network": Limit("supporters.network"),
    "reporter_urgent": Limit("supporters.reporter_urgent"),
    "network_urgent": Limit("supporters.network_urgent"),
}


def keyed(value: str, purpose: str) -> str:
    """A keyed hash: the same phone, cookie or address gives the same key, and the key alone
    gives none of them back (SECRET_KEY never leaves the server)."""
    message = f"{purpose}:{value}".encode()
    return hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).hexdigest()


class Sent:
    """What each reporter (by key) and each network address of a batch sent within each bound's
    window (`counts[bound][key or address]`, counted by the caller in one statement:
    queue_rows.reporters_and_sent); `admit` lets a report through or refuses it, counting the
    batch's own reports as they are let through.

    A text has no network address: its bound is its phone's alone (counting every text's empty
    address together would refuse the whole text line after NETWORK_RATE texts)."""

    def __init__(
        self, *, reporters: dict[str, Reporter], counts: dict[str, Counter[str]], now: datetime
    ):
        self.now = now
        self.counts = {bound: counts.get(bound, Counter()) for bound in LIMITS}
        self.reporters = reporters

    def admit(self, *, key: str, network: str, urgent: bool) -> None:
        """TooManyReports if this reporter (a phone or a device) or this network address has sent
        its bound of reports already (`urgent`: a life at risk, its own higher bounds); else the
        report is counted, towards every bound."""
        suffix = "_urgent" if urgent else ""
        for column, value in (("reporter", key), ("network", network)):
            limit = LIMITS[column + suffix]
            if value and limit.over(self.counts[column + suffix][value]):
                rate = limit.rate
                raise TooManyReports(
                    column,
                    f"{rate.count} reports from this "
                    f"{'phone or device' if column == 'reporter' else 'network'} in "
                    f"{rate.seconds // 60} minutes already; try again later",
                    retry_after=self._retry_after(column + suffix, value),
                    urgent=urgent,
                    rate=rate,
                )
        for bound in LIMITS:
            value = key if bound.startswith("reporter") else network
            if value:
                self.counts[bound][value] += 1

    def _retry_after(self, bound: str, value: str) -> int:
        """Seconds until the oldest report counted leaves the bound's window."""
        limit = LIMITS[bound]
        if bound.startswith("network"):
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


def refusal_words(refused: TooManyReports) -> str:
    """What a supporter reads (on the seat page) or is texted when a report is refused: true of
    the report refused. Only a phone or device over its own bound is told the control room has
    its reports; a report refused below the higher bound of a life at risk is told it can still
    send one; one refused at that bound is sent to a steward or 999."""
    minutes = max(1, round(refused.retry_after / 60))
    if refused.field == "reporter":
        sent = _("You have sent %(count)s reports %(window)s and the control room has them.") % {
            "count": refused.rate.count,
            "window": refused.rate.per(),
        }
    else:
        sent = _(
            "Many reports have come from your network (such as the ground's Wi-Fi) in the last "
            "few minutes, so this one was not taken."
        )
    if refused.urgent:
        then = _("Tell the nearest steward now, or call 999 in an emergency.")
    else:
        then = _(
            "You can send another in about %(minutes)s minutes. If someone needs medical help "
            "or there is a crush, report it now: that is still taken."
        ) % {"minutes": minutes}
    return f"{sent} {then}"
