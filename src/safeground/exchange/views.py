"""The safety officer's page of the league's exchange (a club's installation): this club's
publication (pending while a change waits for the worker, and why when the exchange is down),
and the exchange's record of this club: bans published now and withdrawn, its checks and the
matches found. Counts only: no person is shown, so no access record is due."""

from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.dateparse import parse_datetime

from safeground.accounts.permissions import can_use_register, require

from .client import ExchangeClient, ExchangeRefused, ExchangeUnreachable
from .selectors import publication_read


def _dated(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [row | {"at": parse_datetime(row["at"])} for row in rows]


@login_required
def league_record(request: HttpRequest) -> HttpResponse:
    """The exchange's record of this club, as the exchange answers it now. The register's
    readers (ban and safety officers)."""
    require(can_use_register(request.user))
    if not settings.SAFEGROUND_EXCHANGE_URL:
        # Nothing to show but how to join: 404, as the exchange's record of this club is none.
        return render(request, "exchange/not_enrolled.html", status=404)
    record: dict[str, Any] | None = None
    unreachable = ""
    try:
        answer = ExchangeClient().get("record")
    except (ExchangeRefused, ExchangeUnreachable) as away:
        unreachable = str(away)
    else:
        record = answer | {
            "publications": _dated(answer["publications"]),
            "checks": _dated(answer["checks"]),
        }
    return render(
        request,
        "exchange/record.html",
        {"publication": publication_read(), "record": record, "unreachable": unreachable},
    )
