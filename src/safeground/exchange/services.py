"""The exchange's writes (the exchange role): enrolling a club, a club's publication replacing
its published bans, and the checks: begun (within the bounds), evaluated batch by batch, and
their outcome as the club reports it. Every one recorded (ExchangeRecord). And one of a club's
own: the cache of its holders' tokens (HolderToken)."""

import math
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import QuerySet, Sum
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
    Unusual,
)
from .selectors import LOOKUP_CHUNK
from .tokens import FORMS

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


class MoreThanTickets(SafegroundError):
    """A check of more holders than the fixture has tickets: a check is of a fixture's own
    ticket holders."""

    code = "more_than_tickets"
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
# The point-of-sale checks a club may make (a ticket's holder checked before it is printed):
# many a day, each of a few holders (SALE_HOLDERS), bounded by this and, like every check, by
# the holders evaluated in a day against the tickets of the club's coming fixtures.
PER_SALE = Limit("exchange.sale")
SALE_HOLDERS = 50
# How a point-of-sale check is marked in its record (its detail).
SALE = "sale"
# The window the holders evaluated for a club, and the evaluations for its publication, are
# counted in (SAFEGROUND_EXCHANGE_TICKETS_MARGIN, SAFEGROUND_EXCHANGE_NEW_BANS_PER_DAY).
DAY = timedelta(days=1)
# A club's checks of this many holders or fewer, more than SMALL_CHECKS_A_DAY of them in a day,
# are flagged: a fixture is checked whole, and one person at a time is a search.
SMALL_CHECK_HOLDERS = 20
SMALL_CHECKS_A_DAY = 5


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


def _unusual(club: Club, why: Unusual, **fields: Any) -> ExchangeRecord:
    return _record(club, Action.UNUSUAL, detail=why.value, **fields)


def _evaluated_since(club: Club, since: datetime, *, for_checks: bool) -> QuerySet[ExchangeRecord]:
    return ExchangeRecord.objects.filter(
        club=club, action=Action.EVALUATE, at__gte=since, of_check__isnull=not for_checks
    )


def _over_the_day(
    club: Club, now: datetime, *, for_checks: bool, asked: int, most: int, refusal: str
) -> OverBound | None:
    """A refusal when the club's evaluations of the last day and `asked` more pass `most`; it
    says when enough of them leave the day's window (a day when `asked` alone is too many)."""
    rows = _evaluated_since(club, now - DAY, for_checks=for_checks)
    # Summed in the database: a day of point-of-sale checks is thousands of rows.
    done = rows.aggregate(done=Sum("count"))["done"] or 0
    if done + asked <= most:
        return None
    counts = list(rows.order_by("at").values_list("at", "count"))
    wait = DAY.total_seconds()
    freed = 0
    for at, count in counts:
        freed += count
        if done - freed + asked <= most:
            wait = (at + DAY - now).total_seconds()
            break
    slots = {"count": done + asked, "most": most}
    return OverBound("blinded", refusal % slots, retry_after=max(1, math.ceil(wait)))


def evaluate(*, club: Club, blinded: list[bytes], check: ExchangeRecord | None) -> bytes:
    """A batch evaluated blind: for a check (counted against what it declared, and the club's
    holders of the day against the tickets of its coming fixtures, with the margin), or for the
    club's own publication (tokens.FORMS for each ban it publishes, and the new bans a day)."""
    now = timezone.now()
    if check is not None:
        _evaluate_for_check(club, check, len(blinded), now)
    else:
        _evaluate_for_publication(club, len(blinded), now)
    try:
        evaluated = oprf.evaluate(blinded)
    except oprf.OprfRefused as refused:
        raise ExchangeError(
            "blinded", _("not blinded elements: %(error)s") % {"error": refused}
        ) from refused
    _record(club, Action.EVALUATE, of_check=check, count=len(blinded),
            detail="for a check" if check else "for its publication")  # fmt: skip
    if check is not None and check.coming is not None:
        of_day = _evaluated_since(club, now - DAY, for_checks=True)
        day = of_day.aggregate(day=Sum("count"))["day"] or 0
        flagged = check.steps.filter(action=Action.UNUSUAL, detail=Unusual.HOLDERS_ABOVE_TICKETS)
        if day > check.coming and not flagged.exists():
            _unusual(club, Unusual.HOLDERS_ABOVE_TICKETS, of_check=check, fixture=check.fixture,
                     count=day, tickets=check.tickets, coming=check.coming)  # fmt: skip
    return evaluated


def _evaluate_for_check(club: Club, check: ExchangeRecord, asked: int, now: datetime) -> None:
    done = sum(check.steps.filter(action=Action.EVALUATE).values_list("count", flat=True))
    if done + asked > check.count:
        raise MoreThanDeclared(
            "blinded",
            _("the check declared %(count)s holders; %(done)s are evaluated")
            % {"count": check.count, "done": done},
        )
    if check.coming is None:
        return  # begun before checks declared their tickets
    most = math.floor(check.coming * settings.SAFEGROUND_EXCHANGE_TICKETS_MARGIN)
    refused = _over_the_day(
        club, now, for_checks=True, asked=asked, most=most,
        refusal=_("%(count)s holders evaluated in a day would be more than the tickets of your "
                  "coming fixtures allow (%(most)s): wait"),
    )  # fmt: skip
    if refused is not None:
        _record(club, Action.REFUSED, of_check=check, fixture=check.fixture, count=asked,
                detail=refused.message)  # fmt: skip
        _unusual(club, Unusual.HOLDERS_OVER_MARGIN, of_check=check, fixture=check.fixture,
                 count=asked, tickets=check.tickets, coming=check.coming)  # fmt: skip
        raise refused


def _evaluate_for_publication(club: Club, asked: int, now: datetime) -> None:
    published = PublishedBan.objects.filter(club=club, withdrawn_at__isnull=True).count()
    most = FORMS * (published + settings.SAFEGROUND_EXCHANGE_NEW_BANS_PER_DAY)
    refused = _over_the_day(
        club, now, for_checks=False, asked=asked, most=most,
        refusal=_("%(count)s evaluated in a day for your publication would be more than the "
                  "bans you publish allow (%(most)s): wait"),
    )  # fmt: skip
    if refused is not None:
        _record(club, Action.REFUSED, count=asked, detail=refused.message)
        _unusual(club, Unusual.PUBLICATION_OVER_BOUND, count=asked)
        raise refused


@dataclass(frozen=True)
class PublishedBanIn:
    reference: str
    kind: str
    is_life: bool
    ends_on: date | None
    tokens: list[str]


@transaction.atomic
def publication_replace(*, club: Club, bans: list[PublishedBanIn]) -> ExchangeRecord:
    """The club's bans in force now: new ones published, ones no longer given withdrawn, and a
    ban whose tokens changed (the exchange's key, or a publication of an older form) given its
    new ones. Evaluations since the last publication beyond what this one needed are flagged."""
    for ban in bans:
        if len(ban.tokens) != FORMS:
            raise ExchangeError(
                "tokens", _("every ban has exactly %(forms)s tokens") % {"forms": FORMS}
            )
    now = timezone.now()
    current = {
        ban.reference: ban
        for ban in PublishedBan.objects.select_for_update().filter(
            club=club, withdrawn_at__isnull=True
        )
    }
    held: dict[int, set[str]] = {}
    for ban_id, token in PublishedToken.objects.filter(ban__in=list(current.values())).values_list(
        "ban_id", "token"
    ):
        held.setdefault(ban_id, set()).add(token)
    given = {ban.reference: ban for ban in bans}
    added = renewed = 0
    for reference, ban in given.items():
        row = current.get(reference)
        if row is not None and held.get(row.pk) == set(ban.tokens):
            continue
        if row is None:
            row, _created = PublishedBan.objects.update_or_create(
                club=club,
                reference=reference,
                defaults={"kind": ban.kind, "is_life": ban.is_life, "ends_on": ban.ends_on,
                          "published_at": now, "withdrawn_at": None},
            )  # fmt: skip
            added += 1
        else:
            renewed += 1
        row.tokens.all().delete()
        PublishedToken.objects.bulk_create(PublishedToken(ban=row, token=t) for t in ban.tokens)
    gone = [row.pk for reference, row in current.items() if reference not in given]
    PublishedBan.objects.filter(pk__in=gone).update(withdrawn_at=now)
    # A withdrawn ban's tokens go: nothing is kept that could still be compared.
    PublishedToken.objects.filter(ban_id__in=gone).delete()
    _beyond_publication_flag(club, now, needed=FORMS * (added + renewed))
    return _record(club, Action.PUBLISH, count=len(given), withdrawn=len(gone),
                   detail=f"{added} new, {renewed} renewed")  # fmt: skip


def _beyond_publication_flag(club: Club, now: datetime, *, needed: int) -> None:
    """Flag evaluations for the club's publication, since its last one, beyond the tokens this
    publication needed: guesses evaluated under the cover of publishing."""
    last = ExchangeRecord.objects.filter(club=club, action=Action.PUBLISH).order_by("-at").first()
    since = last.at if last else now - DAY
    evaluated = sum(_evaluated_since(club, since, for_checks=False).values_list("count", flat=True))
    if evaluated > needed:
        _unusual(club, Unusual.BEYOND_PUBLICATION, count=evaluated)


def check_begin(
    *, club: Club, fixture: str, holders: int, tickets: int, coming: int, sale: bool = False
) -> ExchangeRecord:
    """A club begins checking a fixture's holders: no more than the fixture's tickets (a 409),
    within the limits per club and per fixture (SAFEGROUND_LIMITS exchange.club,
    exchange.fixture), or a 429 saying which; a refusal is recorded too, and flagged where it
    is unusual. (Two checks begun at the same instant may both pass the last place: a bound on
    a runaway club, not a quota.) `coming` is the tickets the club has imported for its coming
    fixtures: the holders it may have evaluated in a day (evaluate). A point-of-sale check
    (`sale`: at most SALE_HOLDERS holders, the tickets just sold) is bounded by exchange.sale
    instead of the whole checks' limits, and is not one of the "many small checks" flagged."""
    most = settings.SAFEGROUND_EXCHANGE_HOLDERS_PER_FIXTURE
    for field, number in (("holders", holders), ("tickets", tickets)):
        if number > most:
            raise ExchangeError(field, _("at most %(most)s holders a fixture") % {"most": most})
    if sale and holders > SALE_HOLDERS:
        raise ExchangeError(
            "holders",
            _("at most %(most)s holders a check at the point of sale") % {"most": SALE_HOLDERS},
        )
    if coming < tickets:
        raise ExchangeError(
            "coming", _("the coming fixtures' tickets include this fixture's %(tickets)s")
            % {"tickets": tickets},
        )  # fmt: skip
    if holders > tickets:
        refused = MoreThanTickets(
            "holders", _("%(holders)s holders, but the fixture has %(tickets)s tickets: a check "
                         "is of a fixture's own ticket holders")
            % {"holders": holders, "tickets": tickets},
        )  # fmt: skip
        _record(club, Action.REFUSED, fixture=fixture, count=holders, detail=refused.message)
        _unusual(club, Unusual.MORE_HOLDERS_THAN_TICKETS, fixture=fixture, count=holders,
                 tickets=tickets, coming=coming)  # fmt: skip
        raise refused
    now = timezone.now()
    all_checks = ExchangeRecord.objects.filter(club=club, action=Action.CHECK)
    checks = all_checks.exclude(detail=SALE)
    bounds = (
        [(PER_SALE, all_checks.filter(detail=SALE), "",
          _("more than %(count)s point-of-sale checks %(per)s from %(club)s: wait"))]
        if sale
        else [
            (PER_CLUB, checks, "", _("more than %(count)s checks %(per)s from %(club)s: wait")),
            (PER_FIXTURE, checks.filter(fixture=fixture), "fixture",
             _("more than %(count)s checks of %(fixture)s %(per)s: wait")),
        ]
    )  # fmt: skip
    refused_over = None
    for limit, counted, field, said in bounds:
        times = counted.filter(at__gte=limit.since(now)).order_by("at").values_list("at", flat=True)
        if limit.over(times.count()):
            rate = limit.rate
            slots = {"count": rate.count, "per": rate.per(), "club": club.name, "fixture": fixture}
            refused_over = OverBound(
                field,
                said % slots,
                retry_after=limit.retry_after(times.first(), now),
            )
            break
    if refused_over is not None:
        _record(club, Action.REFUSED, fixture=fixture, count=holders, detail=refused_over.message)
        raise refused_over
    check = _record(club, Action.CHECK, fixture=fixture, count=holders, tickets=tickets,
                    coming=coming, detail=SALE if sale else "")  # fmt: skip
    if holders <= SMALL_CHECK_HOLDERS and not sale:
        small = checks.filter(at__gte=now - DAY, count__lte=SMALL_CHECK_HOLDERS).count()
        if small > SMALL_CHECKS_A_DAY:
            _unusual(club, Unusual.SMALL_CHECKS, of_check=check, fixture=fixture, count=small)
    return check


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
