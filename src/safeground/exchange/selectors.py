"""The exchange's reads (the exchange role): the bans other clubs publish, in force today, with
their tokens (what a checking club compares with, never a name), and the record of the checks
made since a club first published: the checks its bans were there to be matched by."""

import hashlib
from typing import Any

from django.db.models import Prefetch, Q
from django.utils import timezone

from safeground.clock import day_iso, iso

from .models import (
    Club,
    ExchangeRecord,
    HolderToken,
    LeaguePublication,
    PublishedBan,
    PublishedToken,
)

Action = ExchangeRecord.Action
# Identities looked up a query at a time: under SQLite's limit of bound parameters.
LOOKUP_CHUNK = 5000


def published_for(club: Club) -> list[dict[str, Any]]:
    """Every other club's bans in force today: reference, kind, end, the issuing club and its
    contact, and the tokens."""
    today = timezone.localdate()
    bans = (
        PublishedBan.objects.filter(withdrawn_at__isnull=True)
        .filter(Q(ends_on__isnull=True) | Q(ends_on__gte=today))
        .exclude(club=club)
        .select_related("club")
        .prefetch_related(Prefetch("tokens", queryset=PublishedToken.objects.only("ban", "token")))
        .order_by("pk")
    )
    return [
        {
            "reference": ban.reference,
            "kind": ban.kind,
            "is_life": ban.is_life,
            "ends_on": ban.ends_on,
            "club": ban.club.name,
            "contact": ban.club.contact,
            "tokens": [t.token for t in ban.tokens.all()],
        }
        for ban in bans
    ]


def published_version(club: Club) -> str:
    """What the published set of `club`'s view depends on, as a short tag (its ETag): every
    publication, every club's contact (enrolment), and the day (bans end by date). A club asks
    with the tag it holds and is answered 304 while it is current: a check at the point of sale
    does not fetch the whole set each time."""
    last = ExchangeRecord.objects.filter(action=Action.PUBLISH).order_by("-pk").values("pk").first()
    enrolled = Club.objects.order_by("-enrolled_at").values("enrolled_at").first()
    parts = [
        club.pk,
        last["pk"] if last else 0,
        iso(enrolled["enrolled_at"]) if enrolled else "",
        day_iso(timezone.localdate()),
    ]
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:32]


def check_of(club: Club, check_id: int) -> ExchangeRecord | None:
    return ExchangeRecord.objects.filter(pk=check_id, club=club, action=Action.CHECK).first()


def checks_against(club: Club, *, limit: int = 500) -> dict[str, list[dict[str, Any]]]:
    """What other clubs did while this club had bans published, newest first: their checks
    (who, when, how many holders of how many tickets, the tickets of their coming fixtures (the
    holders they may have evaluated in a day), how many matched as they reported it, and
    why any was unusual), and every unusual use, refused or not (a check refused, evaluations
    for a publication beyond it): each could reach this club's bans."""
    first = ExchangeRecord.objects.filter(club=club, action=Action.PUBLISH).order_by("at").first()
    if first is None:
        return {"checks": [], "unusual": []}
    others = ExchangeRecord.objects.filter(at__gte=first.at).exclude(club=club)
    checks = (
        others.filter(action=Action.CHECK)
        .select_related("club")
        .prefetch_related("steps")
        .order_by("-at", "-pk")[:limit]
    )
    found = []
    for check in checks:
        steps = list(check.steps.all())
        outcome = next((s for s in steps if s.action == Action.OUTCOME), None)
        found.append(
            {
                "id": check.pk,
                "club": check.club.name,
                "at": check.at,
                "holders": check.count,
                "tickets": check.tickets,
                "coming": check.coming,
                "matched": outcome.matched if outcome else None,
                "unusual": [s.detail for s in steps if s.action == Action.UNUSUAL],
            }
        )
    unusual = (
        others.filter(action=Action.UNUSUAL).select_related("club").order_by("-at", "-pk")[:limit]
    )
    return {
        "checks": found,
        "unusual": [
            {
                "club": record.club.name,
                "at": record.at,
                "what": record.detail,
                "fixture": record.fixture,
                "count": record.count,
                "tickets": record.tickets,
                "check": record.of_check_id,
            }
            for record in unusual
        ],
    }


def own_record(club: Club, *, limit: int = 20) -> dict[str, Any]:
    """What the exchange holds of this club's own doing: its bans published now, its last
    publications (how many, how many withdrawn) and its own checks (fixture label, holders, how
    many matched as it reported), newest first."""
    today = timezone.localdate()
    in_force = PublishedBan.objects.filter(club=club, withdrawn_at__isnull=True).filter(
        Q(ends_on__isnull=True) | Q(ends_on__gte=today)
    )
    publications = ExchangeRecord.objects.filter(club=club, action=Action.PUBLISH).order_by(
        "-at", "-pk"
    )[:limit]
    checks = (
        ExchangeRecord.objects.filter(club=club, action=Action.CHECK)
        .prefetch_related("steps")
        .order_by("-at", "-pk")[:limit]
    )
    return {
        "published": in_force.count(),
        "publications": [
            {"at": p.at, "bans": p.count, "withdrawn": p.withdrawn} for p in publications
        ],
        "checks": [
            {
                "at": check.at,
                "fixture": check.fixture,
                "holders": check.count,
                "matched": next(
                    (s.matched for s in check.steps.all() if s.action == Action.OUTCOME), None
                ),
            }
            for check in checks
        ],
    }


def holder_tokens_known(epoch: str, identities: list[str]) -> tuple[dict[str, str], list[str]]:
    """The club's side: the cached token of each identity already checked under this key, and
    which of those were last marked before today (to be marked again)."""
    today = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    known: dict[str, str] = {}
    stale: list[str] = []
    for start in range(0, len(identities), LOOKUP_CHUNK):
        rows = HolderToken.objects.filter(
            epoch=epoch, identity__in=identities[start : start + LOOKUP_CHUNK]
        ).values_list("identity", "token", "checked_at")
        for identity, token, checked_at in rows:
            known[identity] = token
            if checked_at < today:
                stale.append(identity)
    return known, stale


def publication_read() -> LeaguePublication | None:
    """The club's side: its publication's state (None before the first change or attempt)."""
    return LeaguePublication.objects.filter(pk=1).first()
