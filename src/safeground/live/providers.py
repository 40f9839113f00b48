"""What live needs from the apps above it, registered by them (live never imports them).

The log registers, in its AppConfig.ready(), the frames a (re)connecting socket missed and the
zones a viewer works in. Live asks only this registry, so the import arrows all point down. Both
are asked for many sockets at once (a reconnect storm's, live/batches.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from .events import Viewer

# A frame of the catch-up with its seq (None for frames outside the log's order: photos).
Caught = tuple[int | None, str]


class CatchUp(Protocol):
    def __call__(
        self, *, fixture_id: int, wants: Sequence[tuple[Viewer, int]]
    ) -> list[list[Caught]]: ...


# (users, fixture) -> user id -> the zones of the fixture they work in (a steward's post)
ViewerZones = Callable[[Sequence[Any], Any], dict[int, frozenset[int]]]

_catch_ups: list[CatchUp] = []
_viewer_zones: list[ViewerZones] = []


def register_catch_up(provider: CatchUp) -> None:
    """Add a source of catch-up frames (each provider's frames in seq order)."""
    if provider not in _catch_ups:
        _catch_ups.append(provider)


def register_viewer_zones(provider: ViewerZones) -> None:
    """Add a source of the zones a viewer works in (the viewer gets the union)."""
    if provider not in _viewer_zones:
        _viewer_zones.append(provider)


def catch_up(*, fixture_id: int, wants: Sequence[tuple[Viewer, int]]) -> list[list[Caught]]:
    """For each (viewer, after seq): the frames after that seq the viewer may see."""
    found: list[list[Caught]] = [[] for _ in wants]
    for provider in _catch_ups:
        for frames, more in zip(found, provider(fixture_id=fixture_id, wants=wants), strict=True):
            frames.extend(more)
    return found


def viewer_zones(users: Sequence[Any], fixture: Any) -> dict[int, frozenset[int]]:
    found: dict[int, frozenset[int]] = {}
    for provider in _viewer_zones:
        for user_id, zones in provider(users, fixture).items():
            found[user_id] = found.get(user_id, frozenset()) | zones
    return found
