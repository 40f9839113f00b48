"""Broadcasts: an urgent message to the match's stewards (a chained record in the log), and
their devices' acknowledgements."""

from collections.abc import Collection

from django.db import transaction
from django.utils.translation import gettext as _

from safeground.accounts.models import User
from safeground.errors import one_of, too_long
from safeground.live.catalogue import BROADCAST, BROADCAST_ACK
from safeground.live.events import Audience, publish
from safeground.matches.models import Fixture
from safeground.venues.models import Zone

from . import hooks
from .models import Broadcast, BroadcastAck, LogEntry
from .selectors import broadcast_json, broadcast_recipients
from .services import LogEntryConflict, LogEntryError, LogEntryNotFound, log_record_append


@transaction.atomic
def broadcast_send(
    *,
    fixture: Fixture,
    sent_by: User,
    script: str,
    text: str = "",
    zone: str = "",
    recipient_ids: Collection[int] | None = None,
) -> Broadcast:
    """An urgent message to every steward of the match, or to those posted in one zone, or to
    the stewards given (a closed stand's, whose blocks no one zone may cover)."""
    if script not in Broadcast.Script.values:
        raise LogEntryError("script", one_of(Broadcast.Script.values))
    text = text.strip() or Broadcast.Script(script).label
    if len(text) > 500:
        raise LogEntryError("text", too_long(len(text), 500))
    target = None
    if zone:
        target = Zone.objects.filter(ground=fixture.ground, code=zone).first()
        if target is None:
            raise LogEntryNotFound(
                "zone",
                _("no zone '%(zone)s' at %(ground)s")
                % {"zone": zone, "ground": fixture.ground.name},
            )
    recipients = (
        broadcast_recipients(fixture, target) if recipient_ids is None else set(recipient_ids)
    )
    if not recipients:
        said = (
            _("no steward is posted in %(zone)s yet") % {"zone": target.name}
            if target
            else _("no steward is posted for this match yet")
        )
        raise LogEntryConflict("recipients", said)
    broadcast = Broadcast.objects.create(
        fixture=fixture,
        script=script,
        text=text,
        zone=target,
        sent_by=sent_by,
        recipient_ids=sorted(recipients),
    )
    record = log_record_append(
        fixture=fixture,
        author=sent_by,
        kind=LogEntry.Kind.BROADCAST,
        text=text,
        zone=target,
        home_only=True,
        note=f"broadcast {broadcast.pk} ({script}) to users {broadcast.recipient_ids}",
    )
    publish(
        fixture_id=fixture.pk,
        type=BROADCAST,
        data=broadcast_json(broadcast),
        # Reaches every addressed steward whatever their post, and the whole control room.
        audience=Audience(home_only=False, user_ids=frozenset(recipients)),
        chain_seq=record.seq,
    )
    hooks.broadcast_sent(broadcast)
    return broadcast


@transaction.atomic
def broadcast_ack(*, broadcast: Broadcast, user: User) -> BroadcastAck:
    """A device's acknowledgement; a second one from the same person changes nothing."""
    ack, created = BroadcastAck.objects.get_or_create(broadcast=broadcast, user=user)
    if created:
        publish(
            fixture_id=broadcast.fixture_id,
            type=BROADCAST_ACK,
            data={"broadcast": broadcast.pk, "user": user.username, "name": str(user)},
            # The control room, and the acknowledging person's other devices (to close it there).
            audience=Audience(home_only=True, user_ids=frozenset({user.pk})),
        )
    return ack
