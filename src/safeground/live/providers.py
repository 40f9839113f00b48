"""What live needs from the apps above it, registered by them (live never imports them).

The log registers, in its AppConfig.ready(), the frames a (re)connecting socket missed and the
zones a viewer works in (safeground.hooks). Live asks only these kinds, so the import arrows all
point down. Both are asked for many sockets at once (a reconnect storm's, live/batches.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from safeground.hooks import Kind, Timing

from .events import Viewer

# A frame of the catch-up with its seq (None for frames outside the log's order: photos).
Caught = tuple[int | None, str]


class CatchUp(Protocol):
    def __call__(
        self, *, fixture_id: int, wants: Sequence[tuple[Viewer, int]]
    ) -> list[list[Caught]]: ...


# (users, fixture) -> user id -> the zones of the fixture they work in (a steward's post)
ZonesByUser = dict[int, frozenset[int]]


def _zones_united(answers: list[ZonesByUser]) -> ZonesByUser:
    """A viewer gets the union of the zones every provider answers."""
    united: ZonesByUser = {}
    for answer in answers:
        for user_id, zones in answer.items():
            united[user_id] = united.get(user_id, frozenset()) | zones
    return united


viewer_zones: Kind[[Sequence[Any], Any], ZonesByUser, ZonesByUser] = Kind(
    "live.viewer_zones", Timing.AT_RENDER, _zones_united
)
# Sources of catch-up frames (signature: CatchUp, keyword-only, which a kind's parameters cannot
# spell), each answering one list per want in seq order; `catch_up` joins them.
catch_up_sources: Kind[..., list[list[Caught]], list[list[list[Caught]]]] = Kind(
    "live.catch_up_sources", Timing.AT_RENDER, list
)


def catch_up(*, fixture_id: int, wants: Sequence[tuple[Viewer, int]]) -> list[list[Caught]]:
    """For each (viewer, after seq): the frames after that seq the viewer may see."""
    found: list[list[Caught]] = [[] for _ in wants]
    for answer in catch_up_sources(fixture_id=fixture_id, wants=wants):
        for frames, more in zip(found, answer, strict=True):
            frames.extend(more)
    return found
