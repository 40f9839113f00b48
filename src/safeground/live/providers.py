"""What live needs from the apps above it, registered by them (live never imports them).

The log registers, in its AppConfig.ready(), the frames a (re)connecting socket missed and the
zones a viewer works in. Live asks only this registry, so the import arrows all point down.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from .events import Viewer


class CatchUp(Protocol):
    def __call__(self, *, fixture_id: int, viewer: Viewer, after_seq: int) -> list[str]: ...


# (user, fixture) -> the zones of the fixture the user works in (a steward's post)
ViewerZones = Callable[[Any, Any], frozenset[int]]

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


def catch_up(*, fixture_id: int, viewer: Viewer, after_seq: int) -> list[str]:
    frames: list[str] = []
    for provider in _catch_ups:
        frames.extend(provider(fixture_id=fixture_id, viewer=viewer, after_seq=after_seq))
    return frames


def viewer_zones(user: Any, fixture: Any) -> frozenset[int]:
    found: frozenset[int] = frozenset()
    for provider in _viewer_zones:
        found |= provider(user, fixture)
    return found
