"""A club publishes its league-wide bans in force (the club's side, SAFEGROUND_EXCHANGE_URL set):
bans for every ground sharing the register, and banning orders (they hold at every ground by
law), approved and in force (not under appeal), within their dates. Each person's identities are
blinded here, evaluated by the exchange, unblinded here: the exchange gets tokens, the ban's kind
and end, and an opaque reference, never a name or a date of birth. Each publication replaces the
last, so a ban ended or overturned is withdrawn by the next one. A change of a ban's status
(bans.hooks) makes the publication pending once it commits; the worker's periodic task
publishes it within seconds, and tries again while the exchange is down (LeaguePublication).
"""

import hashlib
import hmac
import logging
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.conf import settings
from django.db.models import Q, QuerySet
from django.utils import timezone

from safeground import clock
from safeground.bans.models import AccessRecord, Ban
from safeground.bans.services import access_record_write
from safeground.hooks import after_commit_once

from . import checking, oprf, tokens
from .client import (
    ExchangeClient,
    ExchangeRefused,
    ExchangeUnreachable,
    evaluation_at,
    exchange_key,
)
from .models import LeaguePublication

logger = logging.getLogger(__name__)

# A pending publication is tried again this long after a failure; one with nothing pending is
# made again this often anyway (bans that end by date are withdrawn without a change).
RETRY_SECONDS = 60
REPUBLISH_SECONDS = 900


def league_bans(today: date) -> QuerySet[Ban]:
    """The register's bans the league should enforce today: in force and not under appeal (an
    appealed ban is withdrawn until the appeal is decided)."""
    return (
        Ban.objects.in_force_on(today)
        .exclude(status=Ban.Status.APPEALED)
        .filter(
            Q(scope=Ban.Scope.REGISTER) | Q(type=Ban.Type.BANNING_ORDER),
            person__erased_at__isnull=True,
            person__date_of_birth__isnull=False,
        )
        .select_related("person")
    )


def reference(ban: Ban) -> str:
    """An opaque, stable name for the ban at the exchange: nobody else can tell its number."""
    key = settings.SECRET_KEY.encode()
    return hmac.new(key, f"league ban {ban.pk}".encode(), hashlib.sha256).hexdigest()[:32]


def filler_key() -> bytes:
    """The club's key for the filler token of a ban whose date cannot be swapped (tokens.py)."""
    return b"league filler|" + settings.SECRET_KEY.encode()


@dataclass(frozen=True)
class Published:
    bans: int
    withdrawn: int


def league_publish(*, client: ExchangeClient | None = None) -> Published:
    """Publish the bans in force now; the exchange withdraws any published before and not now."""
    client = client or ExchangeClient()
    key = exchange_key(client)
    bans = list(league_bans(timezone.localdate()))
    inputs_of = {
        ban.pk: tokens.banned_inputs(
            ban.person.full_name, ban.person.date_of_birth,  # type: ignore[arg-type]
            filler_key=filler_key(),
        )
        for ban in bans
    }  # fmt: skip
    flat = [item for ban in bans for item in inputs_of[ban.pk]]
    # Cached under the exchange's key like the holders' tokens: a ban published before is not
    # evaluated again, so the exchange's bound on this route (tokens.FORMS for each ban the
    # club publishes) is met by the bans new since, and a retry does not spend it twice.
    made = iter(checking.cached_tokens(
        flat, lambda item: item, key, evaluation_at(client, "publication/evaluate"),
        batch=oprf.BATCH,
    ))  # fmt: skip
    payload = [
        {
            "reference": reference(ban),
            "kind": ban.type,
            "is_life": ban.is_life,
            "ends_on": clock.day_iso(ban.ends_on) if ban.ends_on else None,
            "tokens": [next(made) for _ in inputs_of[ban.pk]],
        }
        for ban in bans
    ]
    answer = client.post("publication", {"bans": payload})
    _recorded(bans)
    return Published(bans=len(bans), withdrawn=int(answer["withdrawn"]))


def _recorded(bans: list[Ban]) -> None:
    """The register's people read to publish them: recorded, one record per register."""
    by_org: dict[int, list[int]] = {}
    for ban in bans:
        by_org.setdefault(ban.organisation_id, []).append(ban.pk)
    for org, ids in sorted(by_org.items()):
        access_record_write(
            user=None, action=AccessRecord.Action.LEAGUE_PUBLISH, organisation=org,
            reason="published to the league's ban exchange (tokens, kind and end only)",
            detail=f"{len(ids)} bans: " + ", ".join(f"#{pk}" for pk in ids),
        )  # fmt: skip


def publication_state() -> LeaguePublication:
    state, _ = LeaguePublication.objects.get_or_create(pk=1)
    return state


def publication_wanted() -> None:
    """After a change commits: the publication is pending (the worker publishes it, so the
    request that changed the register never waits for the exchange)."""
    now = timezone.now()
    publication_state()
    LeaguePublication.objects.filter(pk=1).update(changed_at=now)
    LeaguePublication.objects.filter(pk=1, pending_since__isnull=True).update(pending_since=now)


def publication_due(state: LeaguePublication, now: datetime) -> bool:
    """Publish when a change waits (after a failure, once a minute), and every 15 minutes
    anyway (bans that end by date)."""
    if state.attempted_at is None:
        return True
    if state.changed_at is not None and state.changed_at > state.attempted_at:
        return True  # a change since the last attempt
    if state.failure or state.pending_since is not None:
        return state.attempted_at <= now - timedelta(seconds=RETRY_SECONDS)
    return state.attempted_at <= now - timedelta(seconds=REPUBLISH_SECONDS)


def league_publish_due() -> Published | None:
    """The worker's tick (exchange.tasks): publish when due. A failure is logged; the
    publication stays pending and is tried again."""
    if not settings.SAFEGROUND_EXCHANGE_URL:
        return None
    if not publication_due(publication_state(), timezone.now()):
        return None
    try:
        return league_publish_recorded()
    except (ExchangeRefused, ExchangeUnreachable, oprf.OprfRefused) as failed:
        logger.warning("could not publish the league's bans (tried again later): %s", failed)
        return None


def league_publish_recorded() -> Published:
    """Publish now and record the attempt: what went wrong, or that nothing is pending."""
    started = timezone.now()
    publication_state()
    try:
        done = league_publish()
    except (ExchangeRefused, ExchangeUnreachable, oprf.OprfRefused) as failed:
        LeaguePublication.objects.filter(pk=1).update(
            attempted_at=started, failure=str(failed)[:300]
        )
        raise
    LeaguePublication.objects.filter(pk=1).update(
        attempted_at=started, published_at=timezone.now(), bans=done.bans, failure=""
    )
    # A change that committed while this one was under way is still pending.
    LeaguePublication.objects.filter(pk=1, changed_at__lte=started).update(pending_since=None)
    return done


def ban_changed(ban: Ban) -> None:
    """bans.hooks: a ban's status changed; the publication is pending once the change commits."""
    if settings.SAFEGROUND_EXCHANGE_URL and (
        ban.scope == Ban.Scope.REGISTER or ban.type == Ban.Type.BANNING_ORDER
    ):
        # Once per transaction: the nightly roll-forward changes many bans in one.
        after_commit_once(publication_wanted)
