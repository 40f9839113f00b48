"""Flagging tickets whose holders look like people with a ban in force (bans.matching scores
them).

Runs inside the caller's transaction: a ticket import, or a ban coming into force (the register
calls `ban_match` through bans.hooks, registered in EntryConfig.ready).
"""

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db.models import Q, QuerySet
from django.utils import timezone

from safeground.bans.matching import BanIndex, Banned, Candidate, Holder, swapped
from safeground.bans.models import Ban, LeagueBan
from safeground.matches.models import Fixture

from .models import Ticket, TicketFlag

# Matching ----------------------------------------------------------------------------------


def _threshold() -> float:
    return float(settings.SAFEGROUND_MATCH_THRESHOLD)


def bans_in_force_for(fixture: Fixture) -> QuerySet[Ban]:
    """Bans in force on the day of the match whose scope covers it."""
    day = timezone.localdate(fixture.kickoff)
    clubs = [
        org
        for org in (fixture.home_club.organisation_id, fixture.away_club.organisation_id)
        if org is not None
    ]
    scope = (
        Q(scope=Ban.Scope.REGISTER)
        | Q(scope=Ban.Scope.GROUND, ground=fixture.ground_id)
        | Q(scope=Ban.Scope.CLUB, organisation__in=clubs)
    )
    return Ban.objects.in_force_on(day).filter(scope, person__date_of_birth__isnull=False)


def _banned(bans: QuerySet[Ban]) -> list[Banned]:
    return [
        Banned(ban_id, f"{first} {last}", dob)
        for ban_id, first, last, dob in bans.values_list(
            "pk", "person__first_names", "person__last_name", "person__date_of_birth"
        )
        if dob is not None
    ]


def flags_write(candidates: list[Candidate]) -> int:
    """New flags for candidates not flagged before (a cleared flag is not raised again)."""
    if not candidates:
        return 0
    tickets = {c.ticket_id for c in candidates}
    seen = set(TicketFlag.objects.filter(ticket_id__in=tickets).values_list("ticket_id", "ban_id"))
    now = timezone.now()
    new = [
        TicketFlag(
            ticket_id=c.ticket_id,
            ban_id=c.ban_id,
            score=c.score,
            reasons=list(c.reasons),
            flagged_at=now,
        )
        for c in candidates
        if (c.ticket_id, c.ban_id) not in seen
    ]
    TicketFlag.objects.bulk_create(new, batch_size=500)
    return len(new)


@dataclass(frozen=True)
class MatchReport:
    holders: int
    bans: int
    candidates: int
    flagged: int


def fixture_match(*, fixture: Fixture) -> MatchReport:
    """Match every valid ticket of a match against the bans in force for it; flag the likely ones.

    Runs inside the caller's transaction (the ticket import's)."""
    index = BanIndex(_banned(bans_in_force_for(fixture)))
    holders = (
        Holder(pk, name, dob)
        for pk, name, dob in Ticket.objects.filter(
            fixture=fixture, status=Ticket.Status.VALID, holder_dob__isnull=False
        ).values_list("pk", "holder_name", "holder_dob")
        if dob is not None  # erased holders are left out by the query; this tells mypy
    )
    candidates: list[Candidate] = []
    count = 0
    for holder in holders:
        count += 1
        candidates.extend(index.candidates(holder, threshold=_threshold()))
    return MatchReport(
        holders=count, bans=len(index), candidates=len(candidates), flagged=flags_write(candidates)
    )


def ban_match(*, ban: Ban) -> int:
    """Match one ban that has just come into force against the tickets of the matches it covers.

    Only tickets whose holder was born on the person's date of birth (or with day and month
    swapped) are read."""
    dob = ban.person.date_of_birth
    if dob is None:
        return 0
    dobs = [d for d in (dob, swapped(dob)) if d is not None]
    tickets = Ticket.objects.filter(
        status=Ticket.Status.VALID,
        holder_dob__in=dobs,
        fixture__kickoff__date__gte=ban.starts_on,
    ).select_related("fixture__home_club", "fixture__away_club")
    if ban.ends_on is not None:
        tickets = tickets.filter(fixture__kickoff__date__lte=ban.ends_on)
    index = BanIndex([Banned(ban.pk, ban.person.full_name, dob)])
    candidates: list[Candidate] = []
    covered: dict[int, bool] = {}
    for ticket in tickets:
        if ticket.fixture_id not in covered:
            covered[ticket.fixture_id] = (
                bans_in_force_for(ticket.fixture).filter(pk=ban.pk).exists()
            )
        if covered[ticket.fixture_id] and ticket.holder_dob is not None:
            holder = Holder(ticket.pk, ticket.holder_name, ticket.holder_dob)
            candidates.extend(index.candidates(holder, threshold=_threshold()))
    return flags_write(candidates)


def ban_in_force(ban: Ban) -> int:
    """bans.hooks: a ban has just come into force; its holders are matched and flagged."""
    return ban_match(ban=ban)


# League bans (safeground.exchange): another club's ban, matched by the exchange's tokens -------

LEAGUE_REASONS = [
    "the same name and date of birth as a ban another club published to the league's exchange "
    "(accents, apostrophes, hyphens, spacing and word order ignored; the date as given or with "
    "day and month swapped)"
]


def league_flags_write(matches: list[tuple[int, LeagueBan]]) -> int:
    """New flags for tickets matching league bans (a pair flagged before is not raised again)."""
    if not matches:
        return 0
    seen = set(
        TicketFlag.objects.filter(
            ticket_id__in={ticket_id for ticket_id, _ in matches}, league_ban__isnull=False
        ).values_list("ticket_id", "league_ban_id")
    )
    now = timezone.now()
    new = {
        (ticket_id, ban.pk): TicketFlag(
            ticket_id=ticket_id,
            league_ban=ban,
            score=100.0,
            reasons=LEAGUE_REASONS,
            flagged_at=now,
        )
        for ticket_id, ban in matches
        if (ticket_id, ban.pk) not in seen
    }
    TicketFlag.objects.bulk_create(new.values(), batch_size=500)
    return len(new)


def league_flags_withdrawn(bans: list[LeagueBan], *, at: datetime) -> int:
    """League bans the issuing club no longer publishes: their open flags are cleared."""
    return TicketFlag.objects.filter(league_ban__in=bans, status=TicketFlag.Status.OPEN).update(
        status=TicketFlag.Status.CLEARED,
        decided_at=at,
        decision_note="Withdrawn by the issuing club (ended, or overturned on appeal).",
    )
