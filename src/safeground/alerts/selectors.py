"""Reads: each broadcast's delivery, recipient by recipient."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from safeground import clock
from safeground.accounts.models import User
from safeground.incidents.models import Broadcast, BroadcastAck
from safeground.matches.models import Fixture

from .models import Alert, AlertRecipient

PANEL_BROADCASTS = 10


@dataclass
class Delivery:
    """One recipient of a broadcast: when each step happened (None: not yet)."""

    username: str
    name: str
    devices: int = 0
    sent_at: datetime | None = None
    delivered_at: datetime | None = None
    seen_at: datetime | None = None
    acknowledged_at: datetime | None = None
    failed: str = ""

    def after(self, start: datetime) -> dict[str, int | None]:
        """Seconds from `start` (the broadcast sent) to each step."""
        steps = {"sent": self.sent_at, "delivered": self.delivered_at, "seen": self.seen_at}
        steps["acknowledged"] = self.acknowledged_at
        return {
            step: None if at is None else max(0, round((at - start).total_seconds()))
            for step, at in steps.items()
        }

    def to_json(self) -> dict[str, Any]:
        def when(moment: datetime | None) -> str | None:
            return clock.iso(moment) if moment else None

        return {
            "username": self.username,
            "name": self.name,
            "devices": self.devices,
            "sent_at": when(self.sent_at),
            "delivered_at": when(self.delivered_at),
            "seen_at": when(self.seen_at),
            "acknowledged_at": when(self.acknowledged_at),
            "failed": self.failed,
        }


@dataclass
class BroadcastDelivery:
    broadcast: Broadcast
    raised_at: datetime | None
    rows: list[Delivery] = field(default_factory=list)

    def count(self, step: str) -> int:
        return sum(1 for row in self.rows if getattr(row, f"{step}_at") is not None)

    @property
    def counts(self) -> dict[str, int]:
        steps = ("sent", "delivered", "seen", "acknowledged")
        return {step: self.count(step) for step in steps}

    @property
    def table(self) -> list[tuple[Delivery, dict[str, int | None]]]:
        return [(row, row.after(self.broadcast.sent_at)) for row in self.rows]

    def seconds_to(self, step: str) -> list[float]:
        """Seconds from the broadcast's sending to `step`, for each recipient who reached it."""
        sent = self.broadcast.sent_at
        moments = (getattr(row, f"{step}_at") for row in self.rows)
        return [max(0.0, round((at - sent).total_seconds(), 1)) for at in moments if at]

    def report(self) -> dict[str, Any]:
        """The post-match report's part: delivered and acknowledged (median and worst seconds
        after sending) and each recipient's times."""

        def spread(step: str) -> dict[str, float | None]:
            times = self.seconds_to(step)
            return {
                "median": round(statistics.median(times), 1) if times else None,
                "worst": max(times) if times else None,
            }

        sent = self.broadcast.sent_at
        return {
            "delivered": self.count("delivered"),
            "to_delivered": spread("delivered"),
            "to_acknowledged": spread("acknowledged"),
            "by_recipient": [
                {
                    "name": row.name,
                    **{
                        step: None if at is None else round((at - sent).total_seconds(), 1)
                        for step, at in (
                            ("sent", row.sent_at),
                            ("delivered", row.delivered_at),
                            ("seen", row.seen_at),
                            ("acknowledged", row.acknowledged_at),
                        )
                    },
                    "failed": row.failed,
                }
                for row in self.rows
            ],
        }

    @property
    def overdue(self) -> list[Delivery]:
        """Raised, and still not acknowledged by these."""
        if self.raised_at is None:
            return []
        return [row for row in self.rows if row.acknowledged_at is None]


def deliveries(broadcasts: Sequence[Broadcast]) -> list[BroadcastDelivery]:
    """Each broadcast's recipients as it was addressed, with their four times (three queries)."""
    ids = [b.pk for b in broadcasts]
    addressed = {user_id for b in broadcasts for user_id in b.recipient_ids}
    people = {u.pk: u for u in User.objects.filter(pk__in=addressed)}
    copies = {
        (r.alert.broadcast_id, r.user_id): r
        for r in AlertRecipient.objects.filter(
            alert__broadcast_id__in=ids, alert__kind=Alert.Kind.BROADCAST
        ).select_related("alert")
    }
    raised = dict(
        Alert.objects.filter(broadcast_id__in=ids, kind=Alert.Kind.BROADCAST).values_list(
            "broadcast_id", "raised_at"
        )
    )
    acks = {
        (a.broadcast_id, a.user_id): a.acked_at
        for a in BroadcastAck.objects.filter(broadcast_id__in=ids)
    }
    found = []
    for broadcast in broadcasts:
        delivery = BroadcastDelivery(broadcast, raised.get(broadcast.pk))
        for user_id in broadcast.recipient_ids:
            user = people.get(user_id)
            if user is None:
                continue
            copy = copies.get((broadcast.pk, user_id))
            row = Delivery(user.username, str(user))
            if copy is not None:
                row.devices, row.failed = copy.devices, copy.failed
                row.sent_at, row.delivered_at = copy.sent_at, copy.delivered_at
                row.seen_at = copy.seen_at
            row.acknowledged_at = acks.get((broadcast.pk, user_id))
            delivery.rows.append(row)
        delivery.rows.sort(key=lambda r: (r.acknowledged_at is not None, r.name))
        found.append(delivery)
    return found


def broadcast_delivery(broadcast: Broadcast) -> BroadcastDelivery:
    return deliveries([broadcast])[0]


def recent_deliveries(fixture: Fixture) -> list[BroadcastDelivery]:
    """The match's latest broadcasts (newest first), for the control room's panel."""
    latest = Broadcast.objects.filter(fixture=fixture).select_related("zone", "sent_by")
    return deliveries(list(latest.order_by("-sent_at", "-pk")[:PANEL_BROADCASTS]))


def phone_subscribed(user: User) -> int:
    """How many of this person's phones take push alerts."""
    return user.push_subscriptions.count()
