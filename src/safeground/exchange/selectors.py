"""The exchange's reads (the exchange role): the bans other clubs publish, in force today, with
their tokens (what a checking club compares with, never a name), and the record of the checks
made since a club first published: the checks its bans were there to be matched by."""

from typing import Any

from django.db.models import Prefetch, Q
from django.utils import timezone

from .models import Club, ExchangeRecord, HolderToken, PublishedBan, PublishedToken

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


def check_of(club: Club, check_id: int) -> ExchangeRecord | None:
    return ExchangeRecord.objects.filter(pk=check_id, club=club, action=Action.CHECK).first()


def checks_against(club: Club, *, limit: int = 500) -> list[dict[str, Any]]:
    """The checks other clubs made while this club had bans published: who, when, how many
    holders, and how many matched as they reported it (newest first)."""
    first = ExchangeRecord.objects.filter(club=club, action=Action.PUBLISH).order_by("at").first()
    if first is None:
        return []
    checks = (
        ExchangeRecord.objects.filter(action=Action.CHECK, at__gte=first.at)
        .exclude(club=club)
        .select_related("club")
        .prefetch_related("steps")
        .order_by("-at", "-pk")[:limit]
    )
    found = []
    for check in checks:
        outcome = next((s for s in check.steps.all() if s.action == Action.OUTCOME), None)
        found.append(
            {
                "id": check.pk,
                "club": check.club.name,
                "at": check.at,
                "holders": check.count,
                "matched": outcome.matched if outcome else None,
            }
        )
    return found


def holder_tokens_known(epoch: str, identities: list[str]) -> dict[str, str]:
    """The club's side: the cached token of each identity already checked under this key."""
    known: dict[str, str] = {}
    for start in range(0, len(identities), LOOKUP_CHUNK):
        rows = HolderToken.objects.filter(
            epoch=epoch, identity__in=identities[start : start + LOOKUP_CHUNK]
        ).values_list("identity", "token")
        known.update(rows)
    return known
