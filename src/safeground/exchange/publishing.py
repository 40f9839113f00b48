"""A club publishes its league-wide bans in force (the club's side, SAFEGROUND_EXCHANGE_URL set):
bans for every ground sharing the register, and banning orders (they hold at every ground by
law), approved and in force (not under appeal), within their dates. Each person's identities are
blinded here, evaluated by the exchange, unblinded here: the exchange gets tokens, the ban's kind
and end, and an opaque reference, never a name or a date of birth. Each publication replaces the
last, so a ban ended or overturned is withdrawn by the next one: on every change of a ban's
status (bans.hooks, after the change commits) and by the periodic task.
"""

import hashlib
import hmac
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from safeground.bans.models import AccessRecord, Ban
from safeground.bans.services import access_record_write

from . import blinding, oprf, tokens
from .client import ExchangeClient, ExchangeRefused, ExchangeUnreachable

logger = logging.getLogger(__name__)

# In force and not under appeal: an appealed ban is withdrawn until the appeal is decided.
PUBLISHED_STATUSES = (Ban.Status.ACTIVE, Ban.Status.UPHELD)


def league_bans(today: date) -> QuerySet[Ban]:
    """The register's bans the league should enforce today."""
    return Ban.objects.filter(
        Q(scope=Ban.Scope.REGISTER) | Q(type=Ban.Type.BANNING_ORDER),
        Q(ends_on__isnull=True) | Q(ends_on__gte=today),
        status__in=PUBLISHED_STATUSES,
        starts_on__lte=today,
        person__erased_at__isnull=True,
        person__date_of_birth__isnull=False,
    ).select_related("person")


def reference(ban: Ban) -> str:
    """An opaque, stable name for the ban at the exchange: nobody else can tell its number."""
    key = settings.SECRET_KEY.encode()
    return hmac.new(key, f"league ban {ban.pk}".encode(), hashlib.sha256).hexdigest()[:32]


def evaluation_at(client: ExchangeClient, route: str) -> Callable[[list[bytes]], bytes]:
    """The exchange's evaluation of a batch of blinded elements, over its signed route."""

    def evaluate(blinded: list[bytes]) -> bytes:
        answer = client.post(route, {"blinded": [element.hex() for element in blinded]})
        return bytes.fromhex(answer["evaluated"])

    return evaluate


def tokens_of(inputs: list[bytes], client: ExchangeClient, key: bytes, route: str) -> list[str]:
    """Each input's OPRF token (hex), evaluated blind by the exchange in batches, blinded and
    unblinded in SAFEGROUND_EXCHANGE_PROCESSES processes (exchange/blinding.py)."""
    made = blinding.evaluated(
        inputs, evaluation_at(client, route), key,
        processes=settings.SAFEGROUND_EXCHANGE_PROCESSES,
    )  # fmt: skip
    return [token.hex() for token in made]


def exchange_key(client: ExchangeClient) -> bytes:
    """The exchange's OPRF public key: the pinned one (SAFEGROUND_EXCHANGE_PUBLIC_KEY), or as
    it gives it."""
    pinned = settings.SAFEGROUND_EXCHANGE_PUBLIC_KEY
    return bytes.fromhex(pinned or client.get("key")["public_key"])


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
        ban.pk: tokens.banned_inputs(ban.person.full_name, ban.person.date_of_birth)  # type: ignore[arg-type]
        for ban in bans
    }
    flat = [item for ban in bans for item in inputs_of[ban.pk]]
    made = iter(tokens_of(flat, client, key, "publication/evaluate"))
    payload = [
        {
            "reference": reference(ban),
            "kind": ban.type,
            "is_life": ban.is_life,
            "ends_on": ban.ends_on.isoformat() if ban.ends_on else None,
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


def league_publish_quietly() -> None:
    """After a change commits: publish, and when the exchange cannot be reached log it (the
    periodic task publishes again); the register's own change stands either way."""
    if not settings.SAFEGROUND_EXCHANGE_URL:
        return
    try:
        league_publish()
    except (ExchangeRefused, ExchangeUnreachable, oprf.OprfRefused):
        logger.exception("could not publish the league's bans; the periodic task will")


def ban_changed(ban: Ban) -> None:
    """bans.hooks: a ban's status changed; publish once the change is committed."""
    if settings.SAFEGROUND_EXCHANGE_URL and (
        ban.scope == Ban.Scope.REGISTER or ban.type == Ban.Type.BANNING_ORDER
    ):
        queued = transaction.get_connection().run_on_commit
        if not any(callback is league_publish_quietly for _, callback, _ in queued):
            transaction.on_commit(league_publish_quietly)  # once per transaction
