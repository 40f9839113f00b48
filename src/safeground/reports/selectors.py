"""The reads the post-match report (match_report.py) and the season dashboard (season.py) share,
and what counts as what in both. Reports writes nothing of its own.

Every figure is aggregated in the database (GROUP BY, COUNT): a season is tens of thousands of
log entries and millions of scans, and only the counts come back (docs/adr/0009-reports.md).
Which entries count:

- an *incident* is the log's one definition, `incidents.selectors.incidents_reported`: a report
  that is neither a decision or debrief note (a record) nor an arrest or ejection (an outcome);
  the same in the count by category, the map and the season's charts; its category and
  severity are the ones it was reported with (a later correction is a new entry and does not
  move the count);
- *arrests* and *ejections* are reports in the "arrest" and "ejection" categories,
  counted apart from the incidents (an arrest is not an incident), and casework's
  arrest and ejection outcomes beyond those logged in the same case (an outcome recorded for an
  arrest already in the log is that arrest, not another), counted in one place,
  `arrests_and_ejections`; `arrests_by_offence` and `arrests_by_club` split the arrests by the
  Home Office's offence groups and by the arrested person's club, as far as the cases say;
- *admitted* is the number of tickets admitted at least once (a ticket's first admission, its
  `entered_at`), so a re-entry does not count a person twice; *denied* is every refused scan,
  by reason in the reason table's order and words (entry/rules.py); *prevented from attending*
  is entry's one definition, `entry.selectors.prevented_from_attending`;
- a *home-only* entry counts for the home club's staff only, as it shows only to them in the log.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from typing import Any, NamedTuple

from django.db.models import Count, Min, Q, QuerySet
from django.utils.translation import gettext as _

from safeground.casework.models import Outcome
from safeground.incidents.counts import reports_in_categories
from safeground.incidents.models import DEALT_WITH_STATUSES, Category, LogEntry
from safeground.incidents.selectors import incidents_reported
from safeground.matches.models import Fixture

ARREST = "arrest"
EJECTION = "ejection"
DECISION = "decision"  # the control room's decisions and debrief notes' category


def counted_reports(fixture_ids: Collection[int], *, home_only: bool) -> QuerySet[LogEntry]:
    """The match's incidents as one viewer may count them (home-only ones for the home club)."""
    reports = LogEntry.objects.filter(fixture_id__in=fixture_ids, kind=LogEntry.Kind.REPORT)
    return reports if home_only else reports.filter(home_only=False)


def counted_incidents(fixture_ids: Collection[int], *, home_only: bool) -> QuerySet[LogEntry]:
    """The match's incidents (the log's one definition) as one viewer may count them."""
    found = incidents_reported(fixture_ids)
    return found if home_only else found.filter(home_only=False)


class CaseOutcome(NamedTuple):
    """A case's arrest or ejection at a match, as the season's figures read it."""

    case_id: int
    fixture_id: int
    kind: str  # ARREST or EJECTION
    offence: str  # an arrest's Home Office offence group ("": not recorded)
    club: str  # whose supporter, as the arrest says ("" or "not_known": it does not)
    ticket_end: str | None  # the end of the arrested holder's ticket, if a ticket holder


def case_outcomes(fixture_ids: Collection[int]) -> list[CaseOutcome]:
    """The cases' arrests and ejections at these matches, in one query: what the season's
    arrests and ejections, its arrests by offence and its arrests by club all read."""
    return [
        CaseOutcome(*row)
        for row in Outcome.objects.filter(
            case__fixture_id__in=fixture_ids, kind__in=(ARREST, EJECTION)
        )
        .values_list(
            "case_id", "case__fixture_id", "kind", "home_office_offence", "club",
            "subject__ticket__end",
        )
        .order_by()
    ]  # fmt: skip


def arrests_and_ejections(
    fixture_ids: Collection[int],
    *,
    home_only: bool = True,
    outcomes: Sequence[CaseOutcome] | None = None,
) -> dict[int, dict[str, int]]:
    """fixture id -> {"arrests": n, "ejections": n}: the log's arrest and ejection reports (from
    the counts the database keeps, incidents/counts.py), and the cases' outcomes beyond those
    logged in the same case. `outcomes`: these matches' `case_outcomes`, when the caller has
    read them already."""
    counts = {pk: {"arrests": 0, "ejections": 0} for pk in fixture_ids}
    for fixture_id, code, n in reports_in_categories(
        fixture_ids, (ARREST, EJECTION), home_only=home_only
    ):
        counts[fixture_id]["arrests" if code == ARREST else "ejections"] += n
    if outcomes is None:
        outcomes = case_outcomes(fixture_ids)
    for (fixture_id, kind), n in _outcomes_not_logged(outcomes).items():
        counts[fixture_id]["arrests" if kind == ARREST else "ejections"] += n
    return counts


def _outcomes_not_logged(outcomes: Sequence[CaseOutcome]) -> Counter[tuple[int, str]]:
    """(fixture id, "arrest" or "ejection") -> the cases' outcomes of that kind that no report of
    the same kind among the case's log entries already counts (one query, when there are any)."""
    per_case = Counter((o.case_id, o.fixture_id, o.kind) for o in outcomes)
    if not per_case:
        return Counter()
    logged: Counter[tuple[int, str]] = Counter(
        dict(
            ((case_id, code), n)
            for case_id, code, n in LogEntry.objects.filter(
                cases__in={case_id for case_id, *_ in per_case},
                kind=LogEntry.Kind.REPORT,
                category__code__in=(ARREST, EJECTION),
            )
            .values_list("cases", "category__code")
            .annotate(n=Count("pk"))
            .values_list("cases", "category__code", "n")
            .order_by()
        )
    )
    beyond: Counter[tuple[int, str]] = Counter()
    for (case_id, fixture_id, kind), n in per_case.items():
        beyond[(fixture_id, kind)] += max(0, n - logged[(case_id, kind)])
    return beyond


def arrests_by_offence(outcomes: Sequence[CaseOutcome], total: int) -> list[dict[str, Any]]:
    """The arrests by the Home Office's offence groups (what a club and its force return each
    season), from the cases' arrest outcomes; arrests in the log without one are "not recorded"."""
    groups = {code: str(label) for code, label in Outcome.HomeOfficeOffence.choices}
    found = Counter(o.offence for o in outcomes if o.kind == ARREST)
    rows = [
        {"offence": groups.get(code, code or _("Other")), "code": code, "arrests": n}
        for code, n in sorted(found.items(), key=lambda item: (-item[1], item[0]))
    ]
    unrecorded = total - sum(found.values())
    if unrecorded > 0:
        rows.append({"offence": _("Not recorded in a case"), "code": "", "arrests": unrecorded})
    return rows


def arrests_by_club(
    outcomes: Sequence[CaseOutcome], fixtures: Sequence[Fixture], total: int
) -> list[dict[str, Any]]:
    """The arrests by the club whose supporters they were: as the arrest says (home, away or
    another club), else a ticket holder's by the end of their ticket; else "not known"."""
    by_fixture = {f.pk: f for f in fixtures}
    clubs: Counter[str] = Counter()
    known = 0
    for arrest in outcomes:
        if arrest.kind != ARREST:
            continue
        fixture = by_fixture[arrest.fixture_id]
        club = arrest.club
        side = (
            club
            if club in (Outcome.Club.HOME, Outcome.Club.AWAY, Outcome.Club.OTHER)
            else arrest.ticket_end
        )
        if not side:  # not known: neither the arrest nor a ticket says
            continue
        if side == Outcome.Club.OTHER:
            clubs[str(Outcome.Club.OTHER.label)] += 1  # "Another club", as the arrest says
        else:
            clubs[(fixture.away_club if side == "away" else fixture.home_club).name] += 1
        known += 1
    rows = [{"club": name, "arrests": n} for name, n in clubs.most_common()]
    if total - known > 0:
        rows.append({"club": str(Outcome.Club.NOT_KNOWN.label), "arrests": total - known})
    return rows


def category_names() -> dict[int, tuple[str, str]]:
    return {
        pk: (code, name) for pk, code, name in Category.objects.values_list("pk", "code", "name")
    }


def response_times(fixture_ids: Collection[int], *, home_only: bool) -> QuerySet[LogEntry]:
    """Reports that were acted on, each with its first assignment and first resolution (the
    earliest action of each kind that concerns it), in one aggregate query."""
    return (
        counted_incidents(fixture_ids, home_only=home_only)
        .annotate(
            first_assigned=Min(
                "actions__observed_at", filter=Q(actions__kind=LogEntry.Kind.ASSIGNMENT)
            ),
            first_escalated=Min(
                "actions__observed_at", filter=Q(actions__kind=LogEntry.Kind.ESCALATION)
            ),
            first_resolved=Min(
                "actions__observed_at",
                filter=Q(
                    actions__kind=LogEntry.Kind.STATUS, actions__status__in=DEALT_WITH_STATUSES
                ),
            ),
        )
        .filter(
            Q(first_assigned__isnull=False)
            | Q(first_escalated__isnull=False)
            | Q(first_resolved__isnull=False)
        )
    )
