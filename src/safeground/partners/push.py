"""Pushing each new alert to the organisations that gave an endpoint, off the request's path:
one POST of the signed CAP XML per organisation (safeground.background), tried again after a
back-off when the endpoint does not answer, answers 429 or 5xx, at most ATTEMPTS times in all;
each try is counted on its PushDelivery, with the last answer."""

from __future__ import annotations

import urllib.error
import urllib.request
from functools import partial
from urllib.parse import urlsplit

from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _

from safeground import background
from safeground.accounts.permissions import organisations_told
from safeground.errors import SafegroundError

from .models import PartnerAlert, PushDelivery, PushEndpoint

ATTEMPTS = 4
BACK_OFF_SECONDS = (2.0, 10.0, 30.0)  # before the 2nd, 3rd, 4th try
TIMEOUT_SECONDS = 5.0
CONTENT_TYPE = "application/cap+xml"
LOCAL = {"127.0.0.1", "localhost", "::1"}


# What the API's schema takes as an endpoint: http(s)://, a host or a bracketed IPv6 address, a
# port, then printable ASCII (no space, no NUL: what the schema allows, the server takes).
URL_PATTERN = r"^https?://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?(/[!-~]*)?$"


class PushUrlRefused(SafegroundError):
    """A URL of the right form, but not one this installation posts to: plain http to another
    machine, or no host (403: the server posts to whatever it is given, so never inside)."""

    code = "push_url_refused"
    status = 403


def check_url(url: str) -> str:
    """https, or plain http to this machine only (a test's receiver)."""
    try:
        parts = urlsplit(url)
        scheme, host = parts.scheme, (parts.hostname or "").lower()
    except ValueError:  # a bracketed host that is no IP address, a bad port
        scheme = host = ""
    schemes = {"https", "http"} if host in LOCAL else {"https"}
    if not host or scheme not in schemes:
        raise PushUrlRefused("url", _("must be an https URL"))
    return url


def alert_push(alert: PartnerAlert) -> None:
    """A delivery for each organisation told of the alert that has an endpoint, each tried on a
    background thread."""
    told = organisations_told(alert.fixture, home_only=alert.home_only)
    endpoints = PushEndpoint.objects.filter(organisation_id__in=told)
    deliveries = PushDelivery.objects.bulk_create(
        [
            PushDelivery(alert=alert, organisation_id=endpoint.organisation_id, url=endpoint.url)
            for endpoint in endpoints
        ]
    )
    for delivery in deliveries:
        background.submit(partial(_try, delivery.pk), name="CAP push")


def _post(url: str, body: bytes) -> tuple[int | None, str]:
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": CONTENT_TYPE}
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as answer:
            return answer.status, ""
    except urllib.error.HTTPError as refused:
        return refused.code, ""
    except (OSError, ValueError) as failed:  # no answer: refused, timed out, unreachable
        return None, str(failed)[:200] or type(failed).__name__


def _try(delivery_id: int) -> None:
    delivery = PushDelivery.objects.select_related("alert").get(pk=delivery_id)
    status, error = _post(delivery.url, bytes(delivery.alert.xml))
    now = timezone.now()
    sent = status is not None and 200 <= status < 300
    PushDelivery.objects.filter(pk=delivery_id).update(
        attempts=F("attempts") + 1,
        status=status,
        error=error,
        tried_at=now,
        delivered_at=now if sent else None,
    )
    attempt = delivery.attempts + 1
    transient = status is None or status == 429 or status >= 500
    if not sent and transient and attempt < ATTEMPTS:
        wait = BACK_OFF_SECONDS[min(attempt - 1, len(BACK_OFF_SECONDS) - 1)]
        background.later(wait, partial(_try, delivery_id), name="CAP push again")
