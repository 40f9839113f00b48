"""A fixture's risk category, worked out from the policy and the ground's history, with its reasons.

Every factor keeps its value, its weight and its contribution, and says in plain words what it
counted ("Fighting / disorder v Watford on 10 Sep: 3 entries, severity up to 4"), so the
category can be explained to the police and checked by anyone.

The history lives in apps above this one (the log in incidents, the turnstiles in entry). They
register a history source here in their AppConfig.ready(): a function that, given a window
(this ground, these two clubs, from when to when), returns what happened at those matches as
`PastRecord`s. This module never imports them.
"""

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime, time, timedelta
from typing import Any

from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext

from safeground import clock
from safeground.hooks import Kind, Timing

from .models import Fixture
from .policy import Policy
from .seasons import season_of


@dataclass(frozen=True)
class HistoryWindow:
    """The matches whose history may count for a fixture: at its ground, or between its two
    clubs anywhere, kicking off from `since` up to (not including) `before`."""

    ground_id: int
    club_ids: frozenset[int]
    since: datetime
    before: datetime


@dataclass(frozen=True)
class PastRecord:
    """What happened at one earlier match, counted by one history source."""

    kind: str  # "log" (a category of log reports) or "denial" (banned supporters refused)
    fixture_id: int
    kickoff: datetime
    ground_id: int
    home_club_id: int
    club_ids: frozenset[int]
    match: str  # "Watford" for the home club's own match, else "Chelsea v West Ham"
    code: str  # the log category's code; "" for denials
    label: str  # the log category's name; "" for denials
    count: int
    max_severity: int = 0  # highest severity among the entries (0: not graded)


def _records_joined(answers: list[Iterable[PastRecord]]) -> list[PastRecord]:
    return [record for answer in answers for record in answer]


# Registered from an app's ready() (safeground.hooks): its records count in every assessment.
history_sources: Kind[[HistoryWindow], Iterable[PastRecord], list[PastRecord]] = Kind(
    "matches.history_sources", Timing.AT_RENDER, _records_joined
)


def past_fixtures(window: HistoryWindow) -> QuerySet[Fixture]:
    """The fixtures in the window, for a history source to read its records of."""
    clubs = list(window.club_ids)
    return Fixture.objects.filter(kickoff__gte=window.since, kickoff__lt=window.before).filter(
        Q(ground_id=window.ground_id) | Q(home_club_id__in=clubs, away_club_id__in=clubs)
    )


def past_record(past: Fixture, **fields: Any) -> PastRecord:
    """A record of `past` (fetched with its clubs), the other fields as given."""
    return PastRecord(
        fixture_id=past.pk,
        kickoff=past.kickoff,
        ground_id=past.ground_id,
        home_club_id=past.home_club_id,
        club_ids=frozenset({past.home_club_id, past.away_club_id}),
        match=f"{past.home_club.short_name} v {past.away_club.short_name}",
        **fields,
    )


@dataclass
class Factor:
    key: str
    name: str
    value: float
    weight: float
    contribution: float
    working: str  # how the value was reached
    reasons: list[str] = field(default_factory=list)


@dataclass
class Assessment:
    category: str
    meaning: str
    meanings: dict[str, str]  # the meaning in other languages (safeground/languages.py)
    score: float
    summary: str
    factors: list[Factor]

    def factors_json(self) -> list[dict[str, Any]]:
        return [asdict(factor) for factor in self.factors]


def _n(value: float) -> str:
    """A figure as a safety officer writes it: 2, 2.5, 0.75."""
    return f"{round(value, 2):g}"


def _day(moment: datetime) -> str:
    return clock.local_date(moment)


def season_start(policy: Policy, kickoff: datetime) -> datetime:
    """Midnight (local) on the first day of the kick-off's season (matches.seasons)."""
    start = season_of(timezone.localdate(kickoff), policy.season_starts).start
    return timezone.make_aware(datetime.combine(start, time.min))


def history_window(fixture: Fixture, policy: Policy) -> HistoryWindow:
    kickoff = fixture.kickoff
    since = min(
        season_start(policy, kickoff),
        kickoff - timedelta(days=365 * policy.club_years),
        kickoff - timedelta(days=policy.arrest_days),
        kickoff - timedelta(days=policy.denial_days),
    )
    return HistoryWindow(
        ground_id=fixture.ground_id,
        club_ids=frozenset({fixture.home_club_id, fixture.away_club_id}),
        since=since,
        before=kickoff,
    )


def history_for(fixture: Fixture, policy: Policy) -> list[PastRecord]:
    window = history_window(fixture, policy)
    records = history_sources(window)
    return sorted(records, key=lambda r: (r.kickoff, r.kind, r.label))


def assess(fixture: Fixture, policy: Policy) -> Assessment:
    """The fixture's category under `policy`, from its history before kick-off."""
    records = history_for(fixture, policy)
    factors = [
        _ground_incidents(fixture, policy, records),
        _club_history(fixture, policy, records),
        _arrests_ejections(fixture, policy, records),
        _banned_denials(fixture, policy, records),
        _rivalry(fixture, policy),
        _competition(fixture, policy),
        _kickoff(fixture, policy),
        _away_allocation(fixture, policy),
    ]
    score = round(sum(factor.contribution for factor in factors), 2)
    level = policy.category_for(score)
    above = policy.next_category(score)
    summary = f"Category {level.label}: score {_n(score)}"
    summary += f", below the {_n(above.start)} for {above.label}." if above else "."
    if not any(factor.value for factor in factors[:4]):
        summary += (
            " No history: nothing logged at this ground this season, no earlier meeting of"
            " these clubs logged, no arrests or ejections and no banned supporters denied."
        )
    return Assessment(
        category=level.label,
        meaning=level.meaning,
        meanings=level.meanings,
        score=score,
        summary=summary,
        factors=factors,
    )


def _recency(fixture: Fixture, policy: Policy, record: PastRecord) -> float:
    days = (fixture.kickoff - record.kickoff).total_seconds() / 86400
    return 0.5 ** (days / policy.half_life_days)


def _match(fixture: Fixture, record: PastRecord) -> str:
    """How a reason names an earlier match: "v Watford on 10 Sep" at the home club's own."""
    if record.home_club_id == fixture.home_club_id:
        opponent = record.match.split(" v ", 1)[1]
        return f"v {opponent} on {_day(record.kickoff)}"
    return f"{record.match} on {_day(record.kickoff)}"


def _factor(
    fixture: Fixture,
    policy: Policy,
    key: str,
    name: str,
    picked: list[tuple[PastRecord, float]],
    reason: Callable[[PastRecord], str],
    graded: bool,
    none: str,
) -> Factor:
    """A history factor: each record's points are count (x severity) x multiplier x recency."""
    value, reasons, parts = 0.0, [], []
    for record, multiplier in picked:
        recency = _recency(fixture, policy, record)
        severity = record.max_severity if graded else 1
        points = record.count * severity * multiplier * recency
        value += points
        reasons.append(reason(record))
        parts.append(_points_working(record.count, severity if graded else None, multiplier,
                                     recency, (fixture.kickoff - record.kickoff).days))  # fmt: skip
    weight = policy.weights[key]
    working = " + ".join(parts) + f" = {_n(value)}" if parts else none
    return Factor(
        key=key,
        name=name,
        value=round(value, 2),
        weight=weight,
        contribution=round(value * weight, 2),
        working=working,
        reasons=reasons,
    )


def _points_working(
    count: int, severity: int | None, multiplier: float, recency: float, days: int
) -> str:
    """One record's points with each factor named ("3 (count)", "4 (severity)", "1.5 (category
    weight)", "0.59 (recency, 45 days before)"), not an unlabelled 3 x 4 x 1.5 x 0.59."""
    factors = [gettext("%(n)s (count)") % {"n": count}]
    if severity is not None:
        factors.append(gettext("%(n)s (severity)") % {"n": severity})
    factors.append(gettext("%(n)s (category weight)") % {"n": _n(multiplier)})
    factors.append(
        gettext("%(n)s (recency, %(days)s days before)") % {"n": _n(recency), "days": days}
    )
    return " × ".join(factors)


def _entries(record: PastRecord) -> str:
    return f"{record.count} entr{'y' if record.count == 1 else 'ies'}"


def _logged(
    records: list[PastRecord],
    weights: dict[str, float],
    since: datetime,
    *,
    ground_id: int | None = None,
    club_ids: frozenset[int] | None = None,
) -> list[tuple[PastRecord, float]]:
    """The log's records since a date, of the categories the policy weighs, each with its weight;
    at one ground or between one pair of clubs."""
    return [
        (r, weights[r.code])
        for r in records
        if r.kind == "log"
        and r.kickoff >= since
        and r.code in weights
        and (ground_id is None or r.ground_id == ground_id)
        and (club_ids is None or r.club_ids == club_ids)
    ]


def _ground_incidents(fixture: Fixture, policy: Policy, records: list[PastRecord]) -> Factor:
    since = season_start(policy, fixture.kickoff)
    picked = _logged(records, policy.ground_categories, since, ground_id=fixture.ground_id)
    return _factor(
        fixture,
        policy,
        "ground_incidents",
        "Incidents at this ground this season",
        picked,
        lambda r: f"{r.label} {_match(fixture, r)}: {_entries(r)}, severity up to {r.max_severity}",
        graded=True,
        none=f"None logged at {fixture.ground.name} since {_day(since)}.",
    )


def _club_history(fixture: Fixture, policy: Policy, records: list[PastRecord]) -> Factor:
    since = fixture.kickoff - timedelta(days=365 * policy.club_years)
    both = frozenset({fixture.home_club_id, fixture.away_club_id})
    picked = _logged(records, policy.club_categories, since, club_ids=both)
    return _factor(
        fixture,
        policy,
        "club_history",
        f"History between {fixture.home_club.short_name} and {fixture.away_club.short_name}"
        " supporters",
        picked,
        lambda r: (
            f"{r.label} at {r.match} on {_day(r.kickoff)}: {_entries(r)},"
            f" severity up to {r.max_severity}"
        ),
        graded=True,
        none=f"No incidents logged at their meetings in the last {policy.club_years} years.",
    )


def _arrests_ejections(fixture: Fixture, policy: Policy, records: list[PastRecord]) -> Factor:
    since = fixture.kickoff - timedelta(days=policy.arrest_days)
    picked = _logged(records, policy.arrest_categories, since, ground_id=fixture.ground_id)
    return _factor(
        fixture,
        policy,
        "arrests_ejections",
        "Arrests and ejections at recent matches",
        picked,
        lambda r: f"{r.label} {_match(fixture, r)}: {r.count} logged",
        graded=False,
        none=f"None logged at this ground in the {policy.arrest_days} days before kick-off.",
    )


def _banned_denials(fixture: Fixture, policy: Policy, records: list[PastRecord]) -> Factor:
    since = fixture.kickoff - timedelta(days=policy.denial_days)
    picked = [
        (r, 1.0)
        for r in records
        if r.kind == "denial" and r.ground_id == fixture.ground_id and r.kickoff >= since
    ]
    return _factor(
        fixture,
        policy,
        "banned_denials",
        "Banned supporters denied at recent matches",
        picked,
        lambda r: f"Banned supporters denied at the turnstiles {_match(fixture, r)}: {r.count}",
        graded=False,
        none=f"None denied at this ground in the {policy.denial_days} days before kick-off.",
    )


def _plain(key: str, name: str, policy: Policy, value: float, working: str, reason: str) -> Factor:
    weight = policy.weights[key]
    return Factor(
        key=key,
        name=name,
        value=round(value, 2),
        weight=weight,
        contribution=round(value * weight, 2),
        working=working,
        reasons=[reason] if reason else [],
    )


def _rivalry(fixture: Fixture, policy: Policy) -> Factor:
    clubs = frozenset({fixture.home_club.name, fixture.away_club.name})
    found = next((r for r in policy.rivalries if r.clubs == clubs), None)
    if found is None:
        return _plain(
            "rivalry", "Rivalry", policy, 0, "Not in the policy's table of rivalries.", ""
        )
    return _plain(
        "rivalry",
        "Rivalry",
        policy,
        found.level,
        f"{found.name}: level {_n(found.level)} in the policy's table.",
        f"{found.name} ({fixture.home_club.short_name} v {fixture.away_club.short_name})",
    )


def _competition(fixture: Fixture, policy: Policy) -> Factor:
    competition = policy.competitions.get(fixture.competition.name, 0.0)
    stage_text = fixture.stage.lower()
    words = [(word, value) for word, value in policy.stages.items() if word in stage_text]
    stage_word, stage = max(words, key=lambda wv: wv[1]) if words else ("", 0.0)
    working = f"{fixture.competition.name} {_n(competition)}"
    if fixture.stage:
        working += f" + {fixture.stage}"
        working += f" ('{stage_word}') {_n(stage)}" if stage_word else " 0"
    value = competition + stage
    reason = f"{fixture.competition.name}{f', {fixture.stage}' if fixture.stage else ''}"
    return _plain(
        "competition", "Competition and stage", policy, value, working, reason if value else ""
    )


def _kickoff(fixture: Fixture, policy: Policy) -> Factor:
    local = timezone.localtime(fixture.kickoff)
    evening = local.time() >= policy.evening_from
    weekday = local.weekday() < 5
    working = (
        f"{local:%A %H:%M}: evening {1 if evening else 0} (from {policy.evening_from:%H:%M})"
        f" + weekday {1 if weekday else 0}"
    )
    parts = [p for p, on in (("evening", evening), ("weekday", weekday)) if on]
    reason = f"{' '.join(parts).capitalize()} kick-off, {local:%A %H:%M}" if parts else ""
    return _plain(
        "kickoff", "Kick-off day and time", policy, int(evening) + int(weekday), working, reason
    )


def _away_allocation(fixture: Fixture, policy: Policy) -> Factor:
    above = max(0, fixture.away_allocation - policy.away_free_up_to)
    value = above / policy.away_per
    working = (
        f"({fixture.away_allocation:,} - {policy.away_free_up_to:,}, not below 0)"
        f" / {policy.away_per:,} = {_n(value)}"
    )
    reason = (
        f"{fixture.away_allocation:,} away supporters, {above:,} above {policy.away_free_up_to:,}"
        if above
        else ""
    )
    return _plain("away_allocation", "Away allocation", policy, value, working, reason)
