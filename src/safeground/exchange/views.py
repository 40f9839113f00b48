"""The safety officer's page of the league's exchange (a club's installation): this club's
publication (pending while a change waits for the worker, and why when the exchange is down),
the exchange's record of this club: bans published now and withdrawn, its checks and the
matches found; and the checks other clubs made against its bans, with every unusual use of the
exchange (refused or flagged). Counts only: no person is shown, so no access record is due."""

from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.views.decorators.http import require_http_methods

from safeground.accounts.permissions import can_review_flags, can_use_register, require
from safeground.matches.models import Fixture
from safeground.matches.selectors import fixture_for

from . import check_runs
from .client import ExchangeClient, ExchangeRefused, ExchangeUnreachable
from .models import LeagueCheckRun, Unusual
from .selectors import publication_read


def _dated(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [row | {"at": parse_datetime(row["at"])} for row in rows]


def _said(code: str) -> str:
    """An unusual use in words, in the reader's language (a code this version does not know:
    as the exchange gave it)."""
    return str(Unusual(code).label) if code in Unusual.values else code


def _against(answer: dict[str, Any]) -> dict[str, Any]:
    return {
        "checks": [
            row | {"unusual": [_said(code) for code in row["unusual"]]}
            for row in _dated(answer["checks"])
        ],
        "unusual": [row | {"what": _said(row["what"])} for row in _dated(answer["unusual"])],
    }


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
        against = ExchangeClient().get("checks-against-us")
    except (ExchangeRefused, ExchangeUnreachable) as away:
        unreachable = str(away)
    else:
        record = answer | {
            "publications": _dated(answer["publications"]),
            "checks": _dated(answer["checks"]),
            "against": _against(against),
        }
    return render(
        request,
        "exchange/record.html",
        {"publication": publication_read(), "record": record, "unreachable": unreachable},
    )


def fixture_panel_for(user: Any, fixture: Fixture) -> str | None:
    """The fixture page's panel of its league check (matches.hooks.fixture_panels): the home
    club's ban officers, where the club is in a league's exchange."""
    if not settings.SAFEGROUND_EXCHANGE_URL:
        return None
    if not can_review_flags(user, fixture.ground.organisation_id):
        return None
    return reverse("league_fixture_check", args=[fixture.pk])


@login_required
@require_http_methods(["GET", "POST"])
def fixture_check(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """The fixture's league check (an htmx fragment of its page): the last run's progress,
    polled while it runs; POST starts one in the background. The home club's ban officers.
    Counts only: no person is shown."""
    fixture = fixture_for(request.user, fixture_id)
    require(can_review_flags(request.user, fixture.ground.organisation_id))
    if not settings.SAFEGROUND_EXCHANGE_URL:
        raise Http404("this club is not in a league's exchange")
    run: LeagueCheckRun | None
    if request.method == "POST":
        run = check_runs.league_check_start(fixture=fixture, asked_by=request.user.get_username())
    else:
        run = check_runs.last_run(fixture)
    lost = timezone.now() - check_runs.STALE
    stale = bool(run and not run.finished_at and run.progressed_at < lost)
    return render(
        request,
        "exchange/_fixture_check.html",
        {"fixture": fixture, "run": run, "stale": stale,
         "percent": (100 * run.done // run.total) if run and run.total else 0},
    )  # fmt: skip
