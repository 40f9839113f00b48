"""Live events: who may receive them, and the one function services call to send them.

A service that changes something others must see calls `publish(...)` inside its transaction. The
frame is serialised once, here, and handed to the bus only when the transaction commits: nothing
goes out on rollback, and nothing goes out early (zulip's `send_event_on_commit` is the model).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction

from .catalogue import schema_of

STEWARD = "steward"  # accounts.models.Role.STEWARD; kept literal so the hot path imports no models


@dataclass(frozen=True)
class Viewer:
    """Who is on the other end of a socket, fixed when it connects."""

    user_id: int
    organisation_ids: frozenset[int]
    roles: frozenset[str]  # the viewer's roles in the organisations working this fixture
    home_staff: bool  # a member of the fixture's home organisation
    zone_ids: frozenset[int] = frozenset()  # a steward's posts

    @cached_property
    def steward_only(self) -> bool:  # asked for every frame and socket: kept
        return self.roles == {STEWARD}

    @cached_property
    def kind(self) -> tuple[bool, bool, frozenset[int]]:
        """All an Audience reads of a viewer but who they are: viewers of one kind see the same
        unaddressed events (the catch-up filters the log once per kind)."""
        zones = self.zone_ids if self.steward_only else frozenset()
        return (self.home_staff, self.steward_only, zones)


@dataclass(frozen=True)
class Audience:
    """Who may receive an event. The default reaches everyone who may view the fixture."""

    home_only: bool = False  # only the home club's staff (not the police, not the away club)
    zone_ids: frozenset[int] | None = None  # the zones the event concerns (None: no zone)
    user_ids: frozenset[int] = frozenset()  # people it is addressed to

    def admits(self, viewer: Viewer) -> bool:
        # An event addressed to someone always reaches them.
        return viewer.user_id in self.user_ids or self.admits_kind(viewer)

    def admits_kind(self, viewer: Viewer) -> bool:
        """Whether the viewer's kind (Viewer.kind) admits them, whoever it is addressed to."""
        if self.home_only and not viewer.home_staff:
            return False
        if viewer.steward_only:
            return self.zone_ids is not None and not self.zone_ids.isdisjoint(viewer.zone_ids)
        return True

    def to_wire(self) -> dict[str, Any]:
        return {
            "home_only": self.home_only,
            "zone_ids": None if self.zone_ids is None else sorted(self.zone_ids),
            "user_ids": sorted(self.user_ids),
        }

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> Audience:
        zones = wire.get("zone_ids")
        return cls(
            home_only=bool(wire.get("home_only", False)),
            zone_ids=None if zones is None else frozenset(int(z) for z in zones),
            user_ids=frozenset(int(u) for u in wire.get("user_ids", ())),
        )


EVERYONE = Audience()


@dataclass(frozen=True)
class Event:
    """One published event: the frame every admitted socket receives, serialised once."""

    fixture_id: int
    type: str
    seq: int | None
    data: dict[str, Any]
    audience: Audience
    frame: str = field(repr=False)
    # The seq of the chained record (a broadcast, a post, a photo) this event goes out with: the
    # log's seq it takes, so hubs keep the log's order without waiting for a frame (bus._Order).
    chain_seq: int | None = None


def frame_json(*, fixture_id: int, type: str, data: dict[str, Any], seq: int | None) -> str:
    """The wire shape of every frame, live or catch-up: type, fixture, seq, data."""
    return json.dumps(
        {"type": type, "fixture": fixture_id, "seq": seq, "data": data},
        cls=DjangoJSONEncoder,
        separators=(",", ":"),
    )


def publish(
    *,
    fixture_id: int,
    type: str,
    data: dict[str, Any],
    audience: Audience = EVERYONE,
    seq: int | None = None,
    chain_seq: int | None = None,
) -> None:
    """Send an event to the fixture's live picture when (and only if) the transaction commits.

    The type must be declared in live's catalogue; with SAFEGROUND_CHECK_LIVE_EVENTS on (the
    tests) the data must fit its schema too, as the client will read it."""
    schema = schema_of(type)
    frame = frame_json(fixture_id=fixture_id, type=type, data=data, seq=seq)
    if settings.SAFEGROUND_CHECK_LIVE_EVENTS:
        schema.model_validate(json.loads(frame)["data"])
    event = Event(
        fixture_id=fixture_id,
        type=type,
        seq=seq,
        data=data,
        audience=audience,
        frame=frame,
        chain_seq=chain_seq,
    )
    # robust: a bus failure (Redis down) is logged, it does not turn a committed write into a 500;
    # clients that missed the frame catch up by seq when they reconnect.
    transaction.on_commit(lambda: _send_committed(event), robust=True)


def _send_committed(event: Event) -> None:
    from . import bus

    with _capture_lock:
        for captured in _captures:
            captured.append(event)
    bus.send(event)


# Tests observe what went out after commit (zulip's capture_send_event_calls is the model).
_captures: list[list[Event]] = []
_capture_lock = threading.Lock()


@contextmanager
def capture_events() -> Iterator[list[Event]]:
    """Collect every event sent (after commit) while the block runs, in order."""
    captured: list[Event] = []
    with _capture_lock:
        _captures.append(captured)
    try:
        yield captured
    finally:
        with _capture_lock:
            _captures[:] = [c for c in _captures if c is not captured]
