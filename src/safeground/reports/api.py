"""The reports' read API: the figures the pages show and the rows the exports hold, as JSON."""

from typing import Any

from django.http import HttpRequest
from ninja import Query, Router, Schema
from ninja.security import django_auth

from safeground.bans.selectors import MIN_REASON
from safeground.errors import said

from .exports import (
    SCAN_PAGE,
    ban_rows,
    fixture_for_export,
    ground_for_export,
    log_rows,
    scan_rows,
)
from .match_report import match_report_for
from .season import SeasonFilter, season_for

router = Router(tags=["reports"], auth=django_auth)


class LogRowOut(Schema):
    seq: int
    kind: str
    observed_at: str
    logged_at: str
    author: str
    author_role: str
    category: str
    severity: int | None
    place: str
    text: str
    note: str
    status: str
    escalated_to: str
    concerns: int | None
    home_only: bool
    hash: str


class ScanRowOut(Schema):
    id: int
    scanned_at: str
    stored_at: str
    gate: str
    turnstile: str
    direction: str
    decision: str
    reason: str
    offline: bool


class ScanPage(Schema):
    scans: list[ScanRowOut]
    next_after: int | None


class BanOut(Schema):
    id: int
    type: str
    status: str
    scope: str
    issued_by: str
    starts_on: str
    ends_on: str | None
    is_life: bool
    created_at: str
    # Only with a stated reason, for the register's readers.
    first_names: str | None = None
    last_name: str | None = None
    date_of_birth: str | None = None


@router.get("/reports/fixtures/{fixture_id}", response=dict[str, Any], url_name="report_match")
def report_match(request: HttpRequest, fixture_id: int) -> dict[str, Any]:
    """The post-match report's figures."""
    return match_report_for(request.user, fixture_id).figures()


@router.get("/reports/fixtures/{fixture_id}/log", response=list[LogRowOut], url_name="report_log")
def report_log(request: HttpRequest, fixture_id: int) -> list[dict[str, Any]]:
    """Every entry of the match's log, oldest first (home-only ones for the home club only)."""
    fixture = fixture_for_export(request.user, fixture_id)
    return list(log_rows(request.user, fixture))


@router.get("/reports/fixtures/{fixture_id}/scans", response=ScanPage, url_name="report_scans")
def report_scans(
    request: HttpRequest,
    fixture_id: int,
    after: int = Query(0, ge=0, le=2**63 - 1, description="the last id seen; 0 for the first"),
    limit: int = Query(1000, ge=1, le=SCAN_PAGE, description="rows a page"),
) -> dict[str, Any]:
    """The match's scans by id, a page at a time: pass the last id as `after` for the next."""
    fixture = fixture_for_export(request.user, fixture_id)
    rows = list(scan_rows(fixture, after=after, limit=limit))
    return {"scans": rows, "next_after": rows[-1]["id"] if len(rows) == limit else None}


@router.get("/reports/grounds/{code}/season", response=dict[str, Any], url_name="report_season")
def report_season(
    request: HttpRequest,
    code: str,
    competition: int | None = Query(None, ge=1, le=2**63 - 1, description="a competition's id"),
    opponent: int | None = Query(None, ge=1, le=2**63 - 1, description="the visiting club's id"),
) -> dict[str, Any]:
    """The season dashboard's figures, filtered by competition and opponent (club ids)."""
    return season_for(request.user, code, SeasonFilter(competition, opponent)).figures()


@router.get("/reports/grounds/{code}/bans", response=list[BanOut], url_name="report_bans")
def report_bans(
    request: HttpRequest,
    code: str,
    reason: str = Query(
        "",
        pattern="^$|" + said(MIN_REASON),  # none, or as the register checks a reason
        description="why you need the names (recorded)",
    ),
) -> list[dict[str, Any]]:
    """The club's bans; with a `reason`, for the register's readers only, each person's name and
    date of birth too, and an access record for each person named."""
    ground = ground_for_export(request.user, code)
    return ban_rows(user=request.user, ground=ground, reason=reason)[1]
