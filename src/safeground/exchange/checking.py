"""A club checks a fixture's ticket holders (home and away) against the bans every other club
publishes (the club's side). The holders are blinded here and evaluated blind by the exchange;
the tokens are unblinded here and compared here with the published set fetched first: this
club learns only which holders match, the exchange learns how many holders were asked and
neither who they are nor which matched (the club reports only the count, for the record).
A holder checked before under the same exchange key is not sent again: its token is cached
here (HolderToken), so the exchange also learns how many of the holders are new to this club.

A match becomes a flag in this club's own review (entry's TicketFlag, naming a bans.LeagueBan:
the kind, the end, the issuing club and its contact). A league ban the exchange no longer
publishes (ended, overturned on appeal) is withdrawn here at the next check: its open flags are
cleared, and its confirmed ones no longer refuse entry (entry.decision.in_force_on).
"""

import hashlib
import hmac
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from safeground.bans.models import LeagueBan
from safeground.entry import flagging
from safeground.entry.models import Ticket
from safeground.matches.models import Fixture

from . import blinding, oprf, selectors, services, tokens
from .client import ExchangeClient, evaluation_at, exchange_key


@dataclass(frozen=True)
class CheckReport:
    holders: int
    published: int
    matched: int
    flagged: int
    withdrawn: int


def fixture_label(fixture: Fixture) -> str:
    """How the exchange's record names the fixture: by number only."""
    return f"fixture {fixture.pk}"


def holders_of(fixture: Fixture) -> list[tuple[int, str, date]]:
    rows = Ticket.objects.filter(
        fixture=fixture, status=Ticket.Status.VALID, holder_dob__isnull=False
    ).values_list("pk", "holder_name", "holder_dob")
    return [(pk, name, dob) for pk, name, dob in rows if dob is not None]


def tickets_declared(fixture: Fixture) -> tuple[int, int]:
    """What a check declares to the exchange: the fixture's tickets imported, and the tickets
    imported for the club's coming fixtures (today's and later, and this one): the exchange
    refuses a check of more holders than the first, and more holders a day than the second
    allows (with SAFEGROUND_EXCHANGE_TICKETS_MARGIN)."""
    today = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    tickets = Ticket.objects.filter(fixture=fixture).count()
    others = Ticket.objects.filter(
        fixture__ground__organisation_id=fixture.ground.organisation_id,
        fixture__kickoff__gte=today,
    ).exclude(fixture=fixture)
    return tickets, tickets + others.count()


def key_epoch(key: bytes) -> str:
    """The exchange key's fingerprint: a holder's cached token stands while it is unchanged."""
    return hashlib.sha256(key).hexdigest()[:16]


def identity_secret() -> bytes:
    return b"league holder token|" + settings.SECRET_KEY.encode()


def identity_of(item: bytes, secret: bytes) -> str:
    """A holder's input as the cache names it: keyed by this installation's secret
    (identity_secret), so the cache alone gives no hash of a name and date of birth to test
    guesses against."""
    return hmac.digest(secret, item, "sha256").hex()


# Holders a batch in a check: half the exchange's largest, so the workers start on the first
# sooner and the last one's unblinding (when only one core has work) is half as long; a
# 60,000-holder check is 30 requests to the exchange instead of 15.
CHECK_BATCH = oprf.BATCH // 2


def holder_tokens(
    people: Sequence[tuple[str, date]], key: bytes, evaluate: Callable[[list[bytes]], bytes],
    *, batch: int = CHECK_BATCH,
) -> list[str]:  # fmt: skip
    """Each holder's token (hex), in order (cached_tokens, each folded as tokens.holder_input)."""
    return cached_tokens(people, lambda person: tokens.holder_input(*person), key, evaluate,
                         batch=batch)  # fmt: skip


def cached_tokens[T](
    items: Sequence[T], to_input: Callable[[T], bytes], key: bytes,
    evaluate: Callable[[list[bytes]], bytes], *, batch: int = CHECK_BATCH,
) -> list[str]:  # fmt: skip
    """Each item's token (hex), in order: cached under this exchange key when its input was
    evaluated before (a holder checked before, a ban published before), else blinded,
    evaluated by `evaluate` (each input once) and cached.

    The items are folded and looked up in the cache a batch at a time, as the workers ask
    for batches, and each batch's tokens cached as it comes back (exchange/blinding.stream):
    this process's own work overlaps the workers' instead of coming before and after it."""
    epoch, secret = key_epoch(key), identity_secret()
    identities: list[str] = []
    known: dict[str, str] = {}
    stale: list[str] = []
    sent: list[list[str]] = []  # each batch's identities, by the batch's number

    def fresh_batches() -> Iterator[list[bytes]]:
        fresh: dict[str, bytes] = {}
        taken_before: set[str] = set()
        for start in range(0, len(items), batch):
            chunk = items[start : start + batch]
            inputs = [to_input(item) for item in chunk]
            names = [identity_of(item, secret) for item in inputs]
            identities.extend(names)
            found, old = selectors.holder_tokens_known(epoch, names)
            known.update(found)
            stale.extend(old)
            for name, item in zip(names, inputs, strict=True):
                if name not in known and name not in taken_before:
                    fresh.setdefault(name, item)  # one input twice: evaluated once
            while len(fresh) >= batch or (fresh and start + batch >= len(items)):
                taken = list(fresh)[:batch]
                taken_before.update(taken)
                sent.append(taken)
                yield [fresh.pop(name) for name in taken]

    processes = settings.SAFEGROUND_EXCHANGE_PROCESSES if len(items) > batch else 1
    new: dict[str, str] = {}
    for number, made in blinding.stream(fresh_batches(), evaluate, key, processes=processes):
        tokens_made = {name: token.hex() for name, token in zip(sent[number], made, strict=True)}
        services.holder_tokens_record(epoch=epoch, made=tokens_made, stale=[])
        new.update(tokens_made)
    if stale:
        services.holder_tokens_record(epoch=epoch, made={}, stale=stale)
    return [known.get(name) or new[name] for name in identities]


def published_index(published: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {token: ban for ban in published for token in ban["tokens"]}


def league_check(*, fixture: Fixture, client: ExchangeClient | None = None) -> CheckReport:
    """Check every valid ticket of the fixture at the exchange; flag the matches."""
    client = client or ExchangeClient()
    key = exchange_key(client)
    holders = holders_of(fixture)
    tickets, coming = tickets_declared(fixture)
    check = client.post("checks", {"fixture": fixture_label(fixture), "holders": len(holders),
                                   "tickets": tickets, "coming": coming})  # fmt: skip
    published = client.get("published")["bans"]
    index = published_index(published)
    made = holder_tokens(
        [(name, dob) for _, name, dob in holders],
        key,
        evaluation_at(client, f"checks/{check['id']}/evaluate"),
    )
    matches = [(holders[i][0], index[token]) for i, token in enumerate(made) if token in index]
    flagged, withdrawn = league_flags_record(
        fixture=fixture, matches=matches, published={ban["reference"] for ban in published}
    )
    matched = len({ticket_id for ticket_id, _ in matches})
    client.post(f"checks/{check['id']}/outcome", {"matched": matched})
    return CheckReport(
        holders=len(holders), published=len(published), matched=matched, flagged=flagged,
        withdrawn=withdrawn,
    )  # fmt: skip


@transaction.atomic
def league_flags_record(
    *, fixture: Fixture, matches: list[tuple[int, dict[str, Any]]], published: set[str]
) -> tuple[int, int]:
    """The club's league bans as the exchange publishes them now: a match flags its ticket, a
    ban no longer published is withdrawn. Returns (new flags, bans withdrawn)."""
    org = fixture.ground.organisation_id
    now = timezone.now()
    league_bans: dict[str, LeagueBan] = {}
    for _, ban in matches:
        if ban["reference"] not in league_bans:
            league_bans[ban["reference"]], _ = LeagueBan.objects.update_or_create(
                organisation_id=org,
                reference=ban["reference"],
                defaults={
                    "kind": ban["kind"], "is_life": ban["is_life"],
                    "ends_on": ban["ends_on"], "issuing_club": ban["club"],
                    "contact": ban["contact"], "withdrawn_at": None,
                },
                create_defaults={
                    "kind": ban["kind"], "is_life": ban["is_life"],
                    "ends_on": ban["ends_on"], "issuing_club": ban["club"],
                    "contact": ban["contact"], "first_matched_at": now,
                },
            )  # fmt: skip
    flagged = flagging.league_flags_write(
        [(ticket_id, league_bans[ban["reference"]]) for ticket_id, ban in matches]
    )
    gone = list(
        LeagueBan.objects.filter(organisation_id=org, withdrawn_at__isnull=True).exclude(
            reference__in=published
        )
    )
    LeagueBan.objects.filter(pk__in=[b.pk for b in gone]).update(withdrawn_at=now)
    flagging.league_flags_withdrawn(gone, at=now)
    return flagged, len(gone)
