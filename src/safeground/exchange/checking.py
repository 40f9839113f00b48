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
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime
from functools import partial
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from safeground import background
from safeground.bans.models import LeagueBan
from safeground.entry import flagging
from safeground.entry.models import Ticket
from safeground.errors import SafegroundError
from safeground.matches.models import Fixture

from . import blinding, oprf, selectors, services, tokens
from .client import ExchangeClient, ExchangeRefused, evaluation_at, exchange_key


@dataclass(frozen=True)
class CheckReport:
    holders: int
    published: int
    matched: int
    flagged: int
    withdrawn: int
    # The tickets whose holders matched (their barcodes), and those that could not be checked
    # (no date of birth, or no longer valid).
    matched_tickets: tuple[str, ...] = ()
    unchecked: tuple[str, ...] = ()


class LeagueCheckRefused(SafegroundError):
    """A check at the point of sale this club cannot ask for: no tickets named, too many, or
    a ticket that is not the fixture's (`field` says which)."""

    code = "league_check_refused"


# A check at the point of sale takes the tickets just sold: at most the exchange's bound.
SALE_HOLDERS = 50


def fixture_label(fixture: Fixture) -> str:
    """How the exchange's record names the fixture: by number only."""
    return f"fixture {fixture.pk}"


def holders_of(
    fixture: Fixture, barcodes: Sequence[str] | None = None, since: datetime | None = None
) -> list[tuple[int, str, date]]:
    """The fixture's valid tickets with a holder's date of birth (of `barcodes` only, or those
    imported or changed `since`, if given): (ticket, name, date of birth)."""
    rows = Ticket.objects.filter(
        fixture=fixture, status=Ticket.Status.VALID, holder_dob__isnull=False
    )
    if barcodes is not None:
        rows = rows.filter(barcode__in=barcodes)
    if since is not None:
        rows = rows.filter(updated_at__gte=since)
    found = rows.order_by("pk").values_list("pk", "holder_name", "holder_dob")
    return [(pk, name, dob) for pk, name, dob in found if dob is not None]


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


# A point-of-sale check declares the tickets counted at most this long ago (by this process):
# counting a fixture's and the coming fixtures' tickets at every sale costs more than the check.
DECLARED_FOR = 60.0
_declared: dict[int, tuple[float, tuple[int, int]]] = {}


def tickets_declared_recently(fixture: Fixture, *, holders: int) -> tuple[int, int]:
    """tickets_declared, counted again when the last count is over DECLARED_FOR seconds old,
    or fewer than the `holders` checked (tickets imported since: never a refused check)."""
    now = time.monotonic()
    held = _declared.get(fixture.pk)
    if held is None or now - held[0] > DECLARED_FOR or held[1][0] < holders:
        held = (now, tickets_declared(fixture))
        _declared[fixture.pk] = held
    return held[1]


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
    *, batch: int = CHECK_BATCH, progress: Callable[[int], None] | None = None,
) -> list[str]:  # fmt: skip
    """Each holder's token (hex), in order (cached_tokens, each folded as tokens.holder_input)."""
    return cached_tokens(people, lambda person: tokens.holder_input(*person), key, evaluate,
                         batch=batch, progress=progress)  # fmt: skip


def cached_tokens[T](
    items: Sequence[T], to_input: Callable[[T], bytes], key: bytes,
    evaluate: Callable[[list[bytes]], bytes], *, batch: int = CHECK_BATCH,
    progress: Callable[[int], None] | None = None,
) -> list[str]:  # fmt: skip
    """Each item's token (hex), in order: cached under this exchange key when its input was
    evaluated before (a holder checked before, a ban published before), else blinded,
    evaluated by `evaluate` (each input once) and cached.

    The items are folded and looked up in the cache a batch at a time, as the workers ask
    for batches, and each batch's tokens cached as it comes back (exchange/blinding.stream):
    this process's own work overlaps the workers' instead of coming before and after it.
    `progress` is told how many items have their token, as each batch is looked up or returned."""
    epoch, secret = key_epoch(key), identity_secret()
    identities: list[str] = []
    known: dict[str, str] = {}
    stale: list[str] = []
    sent: list[list[str]] = []  # each batch's identities, by the batch's number
    waiting: dict[str, int] = {}  # items waiting for each identity being evaluated
    counts = {"folded": 0, "waiting": 0}

    def told() -> None:
        if progress is not None:
            progress(counts["folded"] - counts["waiting"])

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
                if name not in known:
                    waiting[name] = waiting.get(name, 0) + 1
                    counts["waiting"] += 1
                if name not in known and name not in taken_before:
                    fresh.setdefault(name, item)  # one input twice: evaluated once
            counts["folded"] += len(chunk)
            told()
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
        counts["waiting"] -= sum(waiting.pop(name, 0) for name in tokens_made)
        told()
    if stale:
        services.holder_tokens_record(epoch=epoch, made={}, stale=stale)
    return [known.get(name) or new[name] for name in identities]


def published_index(published: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {token: ban for ban in published for token in ban["tokens"]}


# The published set as this process last fetched it, by the exchange's address: (its ETag,
# the bans, the bans by token). Each check asks whether it is still current (a 304 when it is):
# a check at the point of sale does not fetch and index the whole set every time.
Bans = list[dict[str, Any]]
_published: dict[str, tuple[str, Bans, dict[str, dict[str, Any]]]] = {}


def published_now(
    client: ExchangeClient, version: str = ""
) -> tuple[Bans, dict[str, dict[str, Any]]]:
    """The bans the exchange publishes now (to this club), and the same by token. Given the
    set's `version` (its ETag) as the exchange said it, the copy held is used without asking
    when it is that one."""
    etag, bans, index = _published.get(client.base_url, ("", [], {}))
    if version and etag == version:
        return bans, index
    fresh_etag, answer = client.get_if_changed("published", etag)
    if answer is not None:
        bans = answer["bans"]
        index = published_index(bans)
        _published[client.base_url] = (fresh_etag, bans, index)
    return bans, index


def league_check(
    *, fixture: Fixture, client: ExchangeClient | None = None,
    progress: Callable[[int, int], None] | None = None, since: datetime | None = None,
) -> CheckReport:  # fmt: skip
    """Check every valid ticket of the fixture at the exchange (those imported or changed
    `since` only, if given); flag the matches. `progress` is told (holders with their token,
    holders) as the check goes."""
    holders = holders_of(fixture, since=since)
    told = (lambda done: progress(done, len(holders))) if progress else None
    return _holders_check(fixture, holders, client or ExchangeClient(), sale=False, progress=told)[
        0
    ]


def tickets_check(
    *, fixture: Fixture, barcodes: Sequence[str], client: ExchangeClient | None = None
) -> CheckReport:
    """Check the holders of a few of the fixture's tickets now (tickets just sold, before they
    are printed): at most SALE_HOLDERS, each the fixture's; a match is flagged as in a whole
    check. A ticket with no holder's date of birth, or no longer valid, is reported unchecked."""
    client = client or ExchangeClient()  # not in a league's exchange: said first
    wanted = list(dict.fromkeys(barcodes))
    if not wanted:
        raise LeagueCheckRefused("tickets", _("name at least one ticket"))
    if len(wanted) > SALE_HOLDERS:
        raise LeagueCheckRefused(
            "tickets", _("at most %(most)s tickets a check at the point of sale; check the "
                         "fixture whole in the background for more") % {"most": SALE_HOLDERS},
        )  # fmt: skip
    known = dict(
        Ticket.objects.filter(fixture=fixture, barcode__in=wanted).values_list("barcode", "pk")
    )
    missing = [barcode for barcode in wanted if barcode not in known]
    if missing:
        raise LeagueCheckRefused(
            "tickets", _("not a ticket of this fixture: %(barcodes)s")
            % {"barcodes": ", ".join(missing[:5])},
        )  # fmt: skip
    holders = holders_of(fixture, wanted)
    checked = {pk for pk, _name, _dob in holders}
    barcode_of = {pk: barcode for barcode, pk in known.items()}
    report, matched = _holders_check(fixture, holders, client, sale=True)
    return replace(
        report,
        matched_tickets=tuple(barcode_of[pk] for pk in matched),
        unchecked=tuple(barcode for barcode in wanted if known[barcode] not in checked),
    )


def new_holders_check(
    *, fixture: Fixture, since: datetime, client: ExchangeClient | None = None
) -> CheckReport:
    """The holders of the fewer than SALE_HOLDERS tickets imported or changed `since`,
    checked as at the point of sale (the ticket import's)."""
    holders = holders_of(fixture, since=since)
    return _holders_check(fixture, holders, client or ExchangeClient(), sale=True)[0]


def _holders_check(
    fixture: Fixture, holders: list[tuple[int, str, date]], client: ExchangeClient, *,
    sale: bool, progress: Callable[[int], None] | None = None,
) -> tuple[CheckReport, list[int]]:  # fmt: skip
    """Blind, have evaluated (with the proof), unblind and compare these holders of the
    fixture's; flag the matches and report the count to the exchange. A point-of-sale check
    (`sale`) is evaluated here, in this process; a whole one in the blinding workers. No
    holder: nothing is asked of the exchange."""
    if not holders:
        return CheckReport(holders=0, published=0, matched=0, flagged=0, withdrawn=0), []
    key = exchange_key(client)
    tickets, coming = (
        tickets_declared_recently(fixture, holders=len(holders))
        if sale
        else tickets_declared(fixture)
    )
    declared = {"fixture": fixture_label(fixture), "holders": len(holders), "tickets": tickets,
                "coming": coming}  # fmt: skip
    if sale:
        return _sale_check(fixture, holders, client, key, declared)
    check = client.post("checks", declared)
    published, index = published_now(client)
    made = holder_tokens(
        [(name, dob) for _, name, dob in holders],
        key,
        evaluation_at(client, f"checks/{check['id']}/evaluate"),
        progress=progress,
    )
    matches = [(holders[i][0], index[token]) for i, token in enumerate(made) if token in index]
    flagged, withdrawn = league_flags_record(
        fixture=fixture, matches=matches, published={ban["reference"] for ban in published}
    )
    matched = list(dict.fromkeys(ticket_id for ticket_id, _ban in matches))
    client.post(f"checks/{check['id']}/outcome", {"matched": len(matched)})
    report = CheckReport(holders=len(holders), published=len(published), matched=len(matched),
                         flagged=flagged, withdrawn=withdrawn)  # fmt: skip
    return report, matched


def _sale_check(
    fixture: Fixture, holders: list[tuple[int, str, date]], client: ExchangeClient, key: bytes,
    declared: dict[str, Any],
) -> tuple[CheckReport, list[int]]:  # fmt: skip
    """A point-of-sale check in one round trip: the holders not cached under the key are
    blinded here and sent with the check's declaration, evaluated in the same request, and
    unblinded here with the proof checked; the answer says the published set's version, so it
    is fetched only when it changed. The outcome is reported after the answer, in the
    background: the sale does not wait for the record."""
    epoch, secret = key_epoch(key), identity_secret()
    names = [identity_of(tokens.holder_input(name, dob), secret) for _, name, dob in holders]
    known, stale = selectors.holder_tokens_known(epoch, names)
    fresh = {
        name: tokens.holder_input(person_name, dob)
        for name, (_, person_name, dob) in zip(names, holders, strict=True)
        if name not in known
    }
    clients, blinded = oprf.blind(list(fresh.values()))
    answer = client.post(
        "checks",
        declared | {"sale": True} | ({"blinded": [b.hex() for b in blinded]} if blinded else {}),
    )
    made: dict[str, str] = {}
    if blinded:
        try:
            outputs = oprf.finalize(clients, bytes.fromhex(answer["evaluated"] or ""), key)
        except (oprf.OprfRefused, ValueError) as forged:
            raise ExchangeRefused(
                "evaluated", _("the exchange's proof does not verify against its key: %(why)s")
                % {"why": forged},
            ) from forged  # fmt: skip
        made = {name: token.hex() for name, token in zip(fresh, outputs, strict=True)}
    if made or stale:
        services.holder_tokens_record(epoch=epoch, made=made, stale=stale)
    published, index = published_now(client, answer.get("published", ""))
    matches = [
        (holders[i][0], index[token])
        for i, name in enumerate(names)
        if (token := known.get(name) or made[name]) in index
    ]
    # No match: nothing to flag, and withdrawals are left to the next check that writes.
    flagged, withdrawn = (
        league_flags_record(
            fixture=fixture, matches=matches, published={ban["reference"] for ban in published}
        )
        if matches
        else (0, 0)
    )
    matched = list(dict.fromkeys(ticket_id for ticket_id, _ban in matches))
    background.submit(
        partial(client.post, f"checks/{answer['id']}/outcome", {"matched": len(matched)}),
        name="league check outcome",
    )
    report = CheckReport(holders=len(holders), published=len(published), matched=len(matched),
                         flagged=flagged, withdrawn=withdrawn)  # fmt: skip
    return report, matched


@transaction.atomic
def league_flags_record(
    *, fixture: Fixture, matches: list[tuple[int, dict[str, Any]]], published: set[str]
) -> tuple[int, int]:
    """The club's league bans as the exchange publishes them now: a match flags its ticket, a
    ban no longer published is withdrawn. Returns (new flags, bans withdrawn)."""
    org = fixture.ground.organisation_id
    now = timezone.now()
    league_bans: dict[str, LeagueBan] = {}
    for _ticket, ban in matches:
        if ban["reference"] not in league_bans:
            league_bans[ban["reference"]], _created = LeagueBan.objects.update_or_create(
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
