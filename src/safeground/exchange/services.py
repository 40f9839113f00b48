"""The exchange's writes (the exchange role): enrolling a club, a club's publication replacing
its published bans, and the checks: begun (within the bounds), evaluated batch by batch, and
their outcome as the club reports it. Every one recorded (ExchangeRecord). And one of a club's
own: the cache of its holders' tokens (HolderToken)."""

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext as _

from safeground import signing
from safeground.errors import SafegroundError, TooManyRequests
from safeground.limits import Limit

from . import oprf, signed
from .models import (
    Club,
    ExchangeRecord,
    HolderToken,
    PublishedBan,
    PublishedToken,
    SeenRequest,
)
from .selectors import LOOKUP_CHUNK

Action = ExchangeRecord.Action


class ExchangeError(SafegroundError):
    """A request the exchange refuses; `field` names what is wrong."""

    code = "exchange_refused"


class ExchangeNotFound(ExchangeError):
    """No such check of the club's (404)."""

    status = 404


class NotHere(SafegroundError):
    """Not on this installation: it is not the league's exchange, or the check is not the
    club's (404)."""

    status = 404  # the code stays the base class's, "invalid"


class MoreThanDeclared(SafegroundError):
    """More holders evaluated than the check declared when it began."""

    code = "more_than_declared"
    status = 409


class NotEnrolled(SafegroundError):
    """The request is not signed by an enrolled club's key."""

    code = "not_enrolled"
    status = 401


class Replayed(SafegroundError):
    """A signed request the exchange has already answered (its nonce seen within its validity)."""

    code = "replayed"
    status = 409


class OverBound(TooManyRequests):
    """More checks than the exchange allows a club or a fixture: try after Retry-After."""


# The checks a club may begin, and of one fixture (SAFEGROUND_LIMITS).
PER_CLUB = Limit("exchange.club")
PER_FIXTURE = Limit("exchange.fixture")


def club_enrol(*, name: str, contact: str, public_key: str) -> Club:
    """Enrol a club (or change its contact and key) by its name."""
    name, contact = name.strip(), contact.strip()
    if not name or len(name) > 200:
        raise ExchangeError("name", _("give the club's name (at most 200 characters)"))
    if not contact or len(contact) > 300:
        raise ExchangeError("contact", _("give a contact other clubs can reach (at most 300)"))
    try:
        raw = signing.b64url_decode(public_key.strip())
    except ValueError:
        raw = b""
    if len(raw) != 32:
        raise ExchangeError("public_key", _("the club's Ed25519 public key, base64url of 32 bytes"))
    club, _created = Club.objects.update_or_create(
        name=name,
        defaults={
            "contact": contact,
            "public_key": signing.b64url(raw),
            "key_id": signing.key_id(raw),
            "enrolled_at": timezone.now(),
        },
    )
    return club


def club_of(request: HttpRequest) -> Club:
    """The enrolled club that signed this request, or a 401 naming what is missing."""
    if settings.SAFEGROUND_ROLE != "exchange":
        raise NotHere("", _("this installation is not the league's exchange"))
    key_id = request.headers.get(signed.KEY, "")
    club = Club.objects.filter(key_id=key_id).first() if key_id else None
    if club is None:
        raise NotEnrolled(signed.KEY, _("no enrolled club has this key"))
    wrong = signed.verify(
        method=request.method or "",
        path=request.path,
        at=request.headers.get(signed.TIME, ""),
        nonce=request.headers.get(signed.NONCE, ""),
        body=request.body,
        signature=request.headers.get(signed.SIGNATURE, ""),
        public_key=club.public_key,
    )
    if wrong:
        raise NotEnrolled(signed.SIGNATURE, wrong)
    _nonce_remember(club, request.headers[signed.NONCE])
    return club


def _nonce_remember(club: Club, nonce: str) -> None:
    """Remember a verified request's nonce; one seen before is a replay. Nonces older than any
    valid request are forgotten here, so the store stays a few minutes' worth."""
    now = timezone.now()
    SeenRequest.objects.filter(at__lt=now - timedelta(seconds=2 * signed.SKEW_SECONDS)).delete()
    try:
        with transaction.atomic():
            SeenRequest.objects.create(club=club, nonce=nonce, at=now)
    except IntegrityError:
        raise Replayed(
            signed.NONCE, _("this signed request was already received: sign each request anew")
        ) from None


def _record(club: Club, action: str, **fields: Any) -> ExchangeRecord:
    return ExchangeRecord.objects.create(at=timezone.now(), club=club, action=action, **fields)


def evaluate(*, club: Club, blinded: list[bytes], check: ExchangeRecord | None) -> bytes:
    """A batch evaluated blind: for a check (counted against what it declared), or for the
    club's own publication."""
    if check is not None:
        done = sum(check.steps.filter(action=Action.EVALUATE).values_list("count", flat=True))
        if done + len(blinded) > check.count:
            raise MoreThanDeclared(
                "blinded",
                _("the check declared %(count)s holders; %(done)s are evaluated")
                % {"count": check.count, "done": done},
            )
    try:
        evaluated = oprf.evaluate(blinded)
    except oprf.OprfRefused as refused:
        raise ExchangeError(
            "blinded", _("not blinded elements: %(error)s") % {"error": refused}
        ) from refused
    _record(club, Action.EVALUATE, of_check=check, count=len(blinded),
            detail="for a check" if check else "for its publication")  # fmt: skip
    return evaluated


@dataclass(frozen=True)
class PublishedBanIn:
    reference: str
    kind: str
    is_life: bool
    ends_on: date | None
    tokens: list[str]


@transaction.atomic
def publication_replace(*, club: Club, bans: list[PublishedBanIn]) -> ExchangeRecord:
    """The club's bans in force now: new ones published, ones no longer given withdrawn."""
    now = timezone.now()
    current = {
        ban.reference: ban
        for ban in PublishedBan.objects.select_for_update().filter(
            club=club, withdrawn_at__isnull=True
        )
    }
    given = {ban.reference: ban for ban in bans}
    added = 0
    for reference, ban in given.items():
        if reference in current:
            continue
        row, _created = PublishedBan.objects.update_or_create(
            club=club,
            reference=reference,
            defaults={"kind": ban.kind, "is_life": ban.is_life, "ends_on": ban.ends_on,
                      "published_at": now, "withdrawn_at": None},
        )  # fmt: skip
        row.tokens.all().delete()
        PublishedToken.objects.bulk_create(PublishedToken(ban=row, token=t) for t in ban.tokens)
        added += 1
    gone = [row.pk for reference, row in current.items() if reference not in given]
    PublishedBan.objects.filter(pk__in=gone).update(withdrawn_at=now)
    # A withdrawn ban's tokens go: nothing is kept that could still be compared.
    PublishedToken.objects.filter(ban_id__in=gone).delete()
    return _record(club, Action.PUBLISH, count=len(given), withdrawn=len(gone),
                   detail=f"{added} new")  # fmt: skip


def check_begin(*, club: Club, fixture: str, holders: int) -> ExchangeRecord:
    """A club begins checking a fixture's holders: within the limits per club and per fixture
    (SAFEGROUND_LIMITS exchange.club, exchange.fixture), or a 429 saying which; a refusal is
    recorded too. (Two checks begun at the same instant may both pass the last place: a bound on
    a runaway club, not a quota.)"""
    most = settings.SAFEGROUND_EXCHANGE_HOLDERS_PER_FIXTURE
    if holders > most:
        raise ExchangeError("holders", _("at most %(most)s holders a fixture") % {"most": most})
    now = timezone.now()
    checks = ExchangeRecord.objects.filter(club=club, action=Action.CHECK)
    refused = None
    for limit, counted, field, said in (
        (PER_CLUB, checks, "", _("more than %(count)s checks %(per)s from %(club)s: wait")),
        (
            PER_FIXTURE,
            checks.filter(fixture=fixture),
            "fixture",
            _("more than %(count)s checks of %(fixture)s %(per)s: wait"),
        ),
    ):
        times = counted.filter(at__gte=limit.since(now)).order_by("at").values_list("at", flat=True)
        if limit.over(times.count()):
            rate = limit.rate
            slots = {"count": rate.count, "per": rate.per(), "club": club.name, "fixture": fixture}
            refused = OverBound(
                field,
                said % slots,
                retry_after=limit.retry_after(times.first(), now),
            )
            break
    if refused is not None:
        _record(club, Action.REFUSED, fixture=fixture, count=holders, detail=refused.message)
        raise refused
    return _record(club, Action.CHECK, fixture=fixture, count=holders)


def check_outcome(*, club: Club, check: ExchangeRecord, matched: int) -> ExchangeRecord:
    if check.club_id != club.pk or check.action != Action.CHECK:
        raise NotHere("check", _("no such check of yours"))
    if matched > check.count:
        raise ExchangeError(
            "matched", _("more than the %(count)s holders checked") % {"count": check.count}
        )
    return _record(club, Action.OUTCOME, of_check=check, fixture=check.fixture, count=check.count,
                   matched=matched)  # fmt: skip


@transaction.atomic
def holder_tokens_record(*, epoch: str, made: dict[str, str], stale: list[str]) -> None:
    """The club's side, as a check goes: the tokens evaluated now cached under the key's epoch,
    and the cached ones used but `stale` (last marked before today) marked as checked now:
    retention counts from a holder's last check, in days."""
    now = timezone.now()
    table = connection.ops.quote_name(HolderToken._meta.db_table)
    at = connection.ops.adapt_datetimefield_value(now)
    # One statement for all the rows: a 60,000-holder check's first caching took 3.5 CPU
    # seconds through bulk_create, 0.6 so (bench/bench_exchange.py). A row two checks at once
    # made is kept once.
    if made:
        with connection.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO {table} (identity, epoch, token, checked_at) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                # In the unique index's order: a fifth less CPU in SQLite than at random.
                [(identity, epoch, token, at) for identity, token in sorted(made.items())],
            )
    for start in range(0, len(stale), LOOKUP_CHUNK):
        HolderToken.objects.filter(
            epoch=epoch, identity__in=stale[start : start + LOOKUP_CHUNK]
        ).update(checked_at=now)
