"""Pages: the post-match report (HTML and PDF), the season dashboard (HTML and PDF), exports."""

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext as _

from safeground import clock
from safeground.accounts.permissions import can_export_people
from safeground.decisions.selectors import decisions_report
from safeground.errors import NotFound, SafegroundError, error_body, text_answer
from safeground.printing import pdf_response

from . import charts
from .exports import (
    FORGED_COLUMNS,
    LOG_COLUMNS,
    SCAN_COLUMNS,
    ExportError,
    ban_rows,
    csv_lines,
    fixture_for_export,
    forged_rows,
    format_check,
    ground_for_export,
    log_rows,
    scan_rows,
    season_rows,
)
from .match_report import MatchReport, match_report_for
from .season import Season, SeasonFilter, season_for


def _int(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() else None


def season_filter(request: HttpRequest) -> SeasonFilter:
    return SeasonFilter(
        competition=_int(request.GET.get("competition")),
        opponent=_int(request.GET.get("opponent")),
        season=_int(request.GET.get("season")),
    )


# --- the post-match report -------------------------------------------------------------------


def _timeline_marks(report: MatchReport) -> list[tuple[int, str]]:
    minutes = report.timeline["minutes"]
    step = report.timeline["step"]
    names = {0: _("Kick-off"), 45: _("Half time"), 60: _("Second half"), 105: _("Full time")}
    return [
        (minutes.index(m // step * step), label)
        for m, label in names.items()
        if minutes and m // step * step in minutes
    ]


def _match_context(report: MatchReport) -> dict[str, Any]:
    timeline = report.timeline
    labels = [f"{m:+d}" for m in timeline["minutes"]]
    return {
        "report": report,
        "fixture": report.fixture,
        "severities": range(1, 6),
        "timeline_svg": charts.bars(
            _("Tickets admitted per 5 minutes, from kick-off"),
            labels,
            timeline["admitted"],
            marks=_timeline_marks(report),
            every=max(1, len(labels) // 24),
        ),
        "timeline_chart": {
            "kind": "timeline",
            "labels": labels,
            "values": timeline["admitted"],
            "marks": [{"index": i, "label": label} for i, label in _timeline_marks(report)],
            # The chart's own words, in the reader's language (reports-1.js writes none).
            "series": _("Tickets admitted"),
            "axis": _("Minutes from kick-off"),
        },
        "block_heat": _block_heat(report),
    }


def _block_heat(report: MatchReport) -> list[dict[str, Any]]:
    """The plan's blocks with their incident count and a shade from it (the darkest: most)."""
    if report.plan is None:
        return []
    counts, most = report.blocks["counts"], report.blocks["most"] or 1
    return [
        {
            "block": block,
            "count": counts.get(block.code, 0),
            "heat": round(0.15 + 0.75 * counts.get(block.code, 0) / most, 2)
            if counts.get(block.code)
            else 0,
        }
        for block in report.plan.blocks
    ]


@login_required
def match_report(request: HttpRequest, fixture_id: int) -> HttpResponse:
    report = match_report_for(request.user, fixture_id)
    context = {**_match_context(report), **decisions_report(request.user, report.fixture)}
    return render(request, "reports/match_report.html", context)


@login_required
def match_report_pdf(request: HttpRequest, fixture_id: int) -> HttpResponse:
    report = match_report_for(request.user, fixture_id)
    return pdf_response(
        "reports/match_report_print.html",
        {**_match_context(report), **decisions_report(request.user, report.fixture)},
        f"post-match-report-{report.fixture}-{report.fixture.kickoff:%Y-%m-%d}",
        request,
    )


# --- the season dashboard --------------------------------------------------------------------


def _season_charts(season: Season) -> dict[str, Any]:
    """The series each chart draws, for Chart.js on the page (a JSON script tag) and for the
    SVG of the PDF: the same numbers, the same colours."""
    labels = [m["label"] for m in season.matches]
    categories = [
        {
            "name": _(c["name"]),  # a seeded category's name is in the catalogue
            "values": [m["incidents"].get(c["code"], 0) for m in season.matches],
            "colour": charts.colour(n),
        }
        for n, c in enumerate(season.categories)
    ]
    return {
        "incidents": {"kind": "stacked", "labels": labels, "series": categories},
        "outcomes": {
            "kind": "bars",
            "labels": labels,
            "series": [
                {
                    "name": _("Arrests"),
                    "values": [m["arrests"] for m in season.matches],
                    "colour": charts.colour(3),
                },
                {
                    "name": _("Ejections"),
                    "values": [m["ejections"] for m in season.matches],
                    "colour": charts.colour(1),
                },
            ],
        },
        "bans": {
            "kind": "lines",
            "labels": [clock.local_date(b["date"]) for b in season.bans],  # the pages' one format
            "series": [
                {
                    "name": _("Issued this season"),
                    "values": [b["issued"] for b in season.bans],
                    "colour": charts.colour(0),
                },
                {
                    "name": _("In force"),
                    "values": [b["in_force"] for b in season.bans],
                    "colour": charts.colour(3),
                },
            ],
        },
        "denied": {
            "kind": "bars",
            "labels": labels,
            "series": [
                {
                    "name": _("Denied at the gates"),
                    "values": [m["denied"] for m in season.matches],
                    "colour": charts.colour(4),
                }
            ],
        },
        "response": {
            "kind": "bars",
            "labels": labels,
            "series": [
                {
                    "name": _("Median minutes to assignment"),
                    "values": [m["median_to_assignment"] or 0 for m in season.matches],
                    "colour": charts.colour(2),
                },
                {
                    "name": _("Median minutes to resolution"),
                    "values": [m["median_to_resolution"] or 0 for m in season.matches],
                    "colour": charts.colour(5),
                },
            ],
        },
    }


def _svg(title: str, chart: dict[str, Any]) -> Any:
    series = [(s["name"], s["values"], s["colour"]) for s in chart["series"]]
    if chart["kind"] == "lines":
        return charts.lines(title, chart["labels"], series)
    if chart["kind"] == "stacked" or len(series) > 1:
        return charts.stacked_bars(title, chart["labels"], series)
    return charts.bars(title, chart["labels"], series[0][1], fill=series[0][2])


@login_required
def season(request: HttpRequest, code: str) -> HttpResponse:
    try:
        found = season_for(request.user, code, season_filter(request))
    except NotFound as error:
        return text_answer(error)
    return render(
        request,
        "reports/season.html",
        {
            "season": found,
            "ground": found.ground,
            "charts": _season_charts(found),
            "query": request.GET.urlencode(),
            "may_export_people": can_export_people(request.user, found.ground.organisation_id),
        },
    )


@login_required
def season_pdf(request: HttpRequest, code: str) -> HttpResponse:
    try:
        found = season_for(request.user, code, season_filter(request))
    except NotFound as error:
        return text_answer(error)
    chart = _season_charts(found)
    titles = {
        "incidents": _("Incidents per match by category"),
        "outcomes": _("Arrests and ejections per match"),
        "bans": _("Bans issued this season and in force"),
        "denied": _("Scans denied at the gates per match"),
        "response": _("Median minutes from report to assignment and to resolution"),
    }
    svgs = [(titles[key], _svg(titles[key], chart[key])) for key in titles]
    return pdf_response(
        "reports/season_print.html",
        {"season": found, "ground": found.ground, "svgs": svgs, "printed_at": timezone.now()},
        f"season-{found.ground.code}",
        request,
    )


# --- exports ---------------------------------------------------------------------------------


def _download(name: str, fmt: str, columns: Any, rows: Any) -> HttpResponse:
    """Built whole before it is sent (a match's scans are a few megabytes): the rows are read
    inside the request, on its own connection, never while the answer streams out."""
    if fmt == "json":
        response: HttpResponse = JsonResponse(list(rows), safe=False)
    else:
        response = HttpResponse("".join(csv_lines(columns, rows)), content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="{slugify(name)}.{fmt}"'
    return response


def _refused(error: SafegroundError) -> HttpResponse:
    """A download refused: the API's one error shape, as the link was asked for data."""
    return JsonResponse(error_body(error.code, error.field, error.message), status=error.status)


@login_required
def match_export(request: HttpRequest, fixture_id: int, what: str, fmt: str) -> HttpResponse:
    fixture = fixture_for_export(request.user, fixture_id)
    try:
        format_check(fmt)
    except ExportError as error:
        return _refused(error)
    name = f"{what}-{fixture}-{fixture.kickoff:%Y-%m-%d}"
    if what == "log":
        return _download(name, fmt, LOG_COLUMNS, log_rows(request.user, fixture))
    if what == "forged":
        return _download(name, fmt, FORGED_COLUMNS, forged_rows(user=request.user, fixture=fixture))
    return _download(name, fmt, SCAN_COLUMNS, scan_rows(fixture))


@login_required
def ground_export(request: HttpRequest, code: str, what: str, fmt: str) -> HttpResponse:
    ground = ground_for_export(request.user, code)
    try:
        format_check(fmt)
        if what == "bans":
            columns, rows = ban_rows(
                user=request.user, ground=ground, reason=request.GET.get("reason", "")
            )
        else:
            found = season_for(request.user, code, season_filter(request))
            if fmt == "json":
                # Downloaded like every other export, not opened in the browser.
                response = JsonResponse(found.figures())
                response["Content-Disposition"] = (
                    f'attachment; filename="{slugify(f"season-{ground.code}")}.json"'
                )
                return response
            columns, rows = season_rows(found)
    except SafegroundError as error:
        return _refused(error)
    return _download(f"{what}-{ground.code}", fmt, columns, rows)
