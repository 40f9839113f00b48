"""The season dashboard of one ground (what counts as what: selectors.py)."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from django.db import connection
from django.utils import timezone
from django.utils.translation import gettext as _

from safeground import clock
from safeground.accounts.permissions import can_read_season, require
from safeground.bans.models import OVER_ITS_TERM, Ban, in_force_sql
from safeground.entry.counts import denied_by_match
from safeground.entry.selectors import prevented_from_attending
from safeground.errors import NotFound
from safeground.incidents.counts import (
    incident_responses,
    incidents_by_block,
    reports_by_category,
)
from safeground.incidents.selectors import NOT_INCIDENT_CATEGORIES
from safeground.matches import seasons
from safeground.matches.models import Club, Competition, Fixture
from safeground.venues.models import Ground
from safeground.venues.selectors import ground_for

from .selectors import (
    arrests_and_ejections,
    arrests_by_club,
    arrests_by_offence,
    case_outcomes,
    category_names,
)

BUSIEST_BLOCKS = 10


@dataclass(frozen=True)
class SeasonFilter:
    competition: int | None = None
    opponent: int | None = None  # a visiting club: its matches at the ground
    season: int | None = None  # the year it starts; none: the latest season with a match played


@dataclass
class Season:
    ground: Ground
    filters: SeasonFilter
    season: seasons.Season | None  # none: no match played at the ground yet
    seasons: list[seasons.Season]  # those with a match played, the latest first
    matches: list[dict[str, Any]]
    categories: list[dict[str, str]]
    bans: list[dict[str, Any]]
    busiest_blocks: list[dict[str, Any]]
    totals: dict[str, Any]
    arrests_by_offence: list[dict[str, Any]]
    arrests_by_club: list[dict[str, Any]]
    competitions: list[Competition]
    opponents: list[Club]

    def figures(self) -> dict[str, Any]:
        return {
            "ground": self.ground.code,
            "season": self.season.label if self.season else None,
            "filters": {
                "competition": self.filters.competition,
                "opponent": self.filters.opponent,
            },
            "totals": self.totals,
            "categories": self.categories,
            "matches": self.matches,
            "bans": self.bans,
            "busiest_blocks": self.busiest_blocks,
            "arrests_by_offence": self.arrests_by_offence,
            "arrests_by_club": self.arrests_by_club,
        }


def season_for(user: Any, code: str, filters: SeasonFilter) -> Season:
    ground = ground_for(user, code)
    require(can_read_season(user, ground))
    return season(ground, filters)


def played_fixtures(ground: Ground) -> list[Fixture]:
    """Every match played at the ground so far, oldest first (one query: the seasons, the
    season's matches and its filters' choices are all picked from these)."""
    return list(
        Fixture.objects.filter(ground=ground, kickoff__lte=timezone.now())
        .select_related("home_club", "away_club", "competition")
        .order_by("kickoff")
    )


def _narrowed(fixtures: list[Fixture], filters: SeasonFilter) -> list[Fixture]:
    return [
        f
        for f in fixtures
        if filters.competition in (None, f.competition_id)
        and filters.opponent in (None, f.away_club_id)
    ]


def season_chosen(played: list[seasons.Season], filters: SeasonFilter) -> seasons.Season | None:
    """The season asked for (one with a match played at the ground), or the latest."""
    if filters.season is None:
        return played[0] if played else None
    for one in played:
        if one.start.year == filters.season:
            return one
    raise NotFound("season", _("no match was played at this ground that season"))


def season(ground: Ground, filters: SeasonFilter) -> Season:
    starts = seasons.season_starts()
    every = played_fixtures(ground)
    of_match = {f.pk: seasons.season_of(timezone.localdate(f.kickoff), starts) for f in every}
    played = sorted(set(of_match.values()), key=lambda s: s.start, reverse=True)
    within = season_chosen(played, filters)
    of_season = [f for f in every if of_match[f.pk] == within]
    fixtures = _narrowed(of_season, filters)
    ids = [f.pk for f in fixtures]
    names = category_names()
    by_category = _incidents_by_category(ids, names)
    outcomes_of_cases = case_outcomes(ids)
    outcomes = arrests_and_ejections(ids, outcomes=outcomes_of_cases)
    denied = denied_by_match(ids)
    prevented = prevented_from_attending(ids)
    assigned, resolved = _minutes_to_response(ids)
    used = Counter[str]()
    for counts in by_category.values():
        used.update(counts)
    categories = [
        {"code": code, "name": name}
        for code, name in sorted(names.values(), key=lambda c: -used[c[0]])
        if used[code]
    ]
    matches: list[dict[str, Any]] = []
    for f in fixtures:
        opponent = f.away_club
        matches.append(
            {
                "id": f.pk,
                "date": clock.day_iso(f.kickoff),
                "label": f"{timezone.localtime(f.kickoff):%d %b} v {opponent.short_name}",
                "opponent": opponent.name,
                "competition": f.competition.name,
                "incidents": dict(by_category.get(f.pk, {})),
                "incidents_total": sum(by_category.get(f.pk, Counter()).values()),
                "arrests": outcomes[f.pk]["arrests"],
                "ejections": outcomes[f.pk]["ejections"],
                "denied": denied.get(f.pk, 0),
                "prevented": prevented[f.pk],
                "median_to_assignment": _median(assigned.get(f.pk, [])),
                "median_to_resolution": _median(resolved.get(f.pk, [])),
            }
        )
    busiest = _busiest_blocks(ids)
    days = [timezone.localtime(f.kickoff).date() for f in fixtures]
    bans = bans_over_time(ground, days, within.start if within else None)
    totals = _season_totals(matches, bans, assigned, resolved)
    return Season(
        ground=ground,
        filters=filters,
        season=within,
        seasons=played,
        matches=matches,
        categories=categories,
        bans=bans,
        busiest_blocks=busiest,
        totals=totals,
        arrests_by_offence=arrests_by_offence(outcomes_of_cases, totals["arrests"]),
        arrests_by_club=arrests_by_club(outcomes_of_cases, fixtures, totals["arrests"]),
        competitions=sorted({f.competition for f in of_season}, key=lambda c: c.name),
        opponents=sorted({f.away_club for f in of_season}, key=lambda c: c.name),
    )


def _incidents_by_category(
    ids: list[int], names: dict[int, tuple[str, str]]
) -> dict[int, Counter[str]]:
    """match id -> the home club's counted incidents by category code, from the counts the
    database keeps (incidents/counts.py). Arrests and ejections are not incidents here: they are
    the season's arrests and ejections, counted apart (with the cases' outcomes) in their own
    chart and columns."""
    by_category: dict[int, Counter[str]] = defaultdict(Counter)
    for fixture_id, category_id, n in reports_by_category(ids, home_only=True):
        code = names[category_id][0] if category_id in names else ""
        if code not in NOT_INCIDENT_CATEGORIES:
            by_category[fixture_id][code] += n
    return by_category


def _minutes_to_response(
    ids: list[int],
) -> tuple[dict[int, list[float]], dict[int, list[float]]]:
    """match id -> minutes from each incident seen to its first assignment, and to its first
    resolution (an incident not assigned or not resolved is left out of that list)."""
    assigned: dict[int, list[float]] = defaultdict(list)
    resolved: dict[int, list[float]] = defaultdict(list)
    for fixture_id, to_assignment, to_resolution in incident_responses(ids, home_only=True):
        if to_assignment is not None:
            assigned[fixture_id].append(to_assignment.total_seconds() / 60)
        if to_resolution is not None:
            resolved[fixture_id].append(to_resolution.total_seconds() / 60)
    return assigned, resolved


def _busiest_blocks(ids: list[int]) -> list[dict[str, Any]]:
    """The blocks with the most counted incidents over these matches, most first."""
    return [
        {"block": code, "incidents": n}
        for code, n in incidents_by_block(ids, home_only=True)[:BUSIEST_BLOCKS]
    ]


def _season_totals(
    matches: list[dict[str, Any]],
    bans: list[dict[str, Any]],
    assigned: dict[int, list[float]],
    resolved: dict[int, list[float]],
) -> dict[str, Any]:
    """The season's figures: sums over the matches, the bans as of the last match, and the
    medians over every incident of the season (not a median of the matches' medians)."""
    all_to_assignment = [v for values in assigned.values() for v in values]
    all_to_resolution = [v for values in resolved.values() for v in values]
    return {
        "matches": len(matches),
        "incidents": sum(m["incidents_total"] for m in matches),
        "arrests": sum(m["arrests"] for m in matches),
        "ejections": sum(m["ejections"] for m in matches),
        "denied": sum(m["denied"] for m in matches),
        "prevented": sum(m["prevented"] for m in matches),
        "bans_issued": bans[-1]["issued"] if bans else 0,
        "bans_in_force": bans[-1]["in_force"] if bans else 0,
        "median_to_assignment": _median(all_to_assignment),
        "median_to_resolution": _median(all_to_resolution),
    }


def bans_over_time(
    ground: Ground, days: Sequence[date], season_start: date | None
) -> list[dict[str, Any]]:
    """On each match day: the bans of the ground's club issued this season so far (from
    `season_start`), and the bans in force that day. One statement: the days as a list of rows,
    joined to the club's bans, with the register's own in-force rule (`in_force_sql`); written
    in SQL because the ORM took longer to build its 100 filtered counts than the database took
    to run them (ADR 0022). The join takes only the bans issued and started by the day: both
    counts ask that of a ban (the rule counts a ban in force only if it was issued, and from its
    start), and the rows to count are fewer."""
    if not days or season_start is None:
        return []
    # Issued: approved, whatever became of it since (a ban revoked later was still issued).
    issued = ", ".join(f"'{status}'" for status in sorted([*OVER_ITS_TERM, Ban.Status.REVOKED]))
    cast = "::date" if connection.vendor == "postgresql" else ""
    rows = ", ".join(f"(%s, %s{cast})" for _ in days)
    sql = (
        f"WITH d(n, day) AS (VALUES {rows}) "
        "SELECT d.n, "
        f"count(b.id) FILTER (WHERE b.starts_on >= %s{cast}), "
        f"count(b.id) FILTER (WHERE {in_force_sql('b', 'd.day')}) "
        "FROM d LEFT JOIN bans_ban b ON b.organisation_id = %s "
        f"AND b.status IN ({issued}) AND b.starts_on <= d.day GROUP BY d.n"
    )
    values: list[Any] = [v for n, day in enumerate(days) for v in (n, clock.day_iso(day))]
    with connection.cursor() as cursor:
        cursor.execute(sql, [*values, clock.day_iso(season_start), ground.organisation_id])
        counts = {n: (issued_n, in_force_n) for n, issued_n, in_force_n in cursor.fetchall()}
    return [
        {"date": clock.day_iso(day), "issued": counts[n][0], "in_force": counts[n][1]}
        for n, day in enumerate(days)
    ]


def _median(values: Sequence[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None
