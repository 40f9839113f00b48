"""Panels that apps above the log add to its pages (the steward's phone, the control room).

The log's pages are the screens people have open on match day; deployment (posts, check-in,
pre-match checks) lives above the log and must show there without the log importing it. An app
registers a panel provider in its AppConfig.ready(): given the user and the fixture, it answers
the URL of an htmx fragment to load into the page (or None: nothing for this user) and the live
event types after which the fragment is fetched again (static/safeground/live-1.js
`refreshPanels`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Panel:
    url: str
    refresh_on: tuple[str, ...] = ()  # live event types that bring a fresh copy
    top: bool = False  # the control room: above the log (an alarm), not in the side tabs

    @property
    def refresh_types(self) -> str:
        return " ".join(self.refresh_on)


PanelProvider = Callable[[Any, Any], Panel | None]  # (user, fixture) -> a panel, or None

_steward: list[PanelProvider] = []
_control_room: list[PanelProvider] = []
# Banners: the same kind of fragment, shown at the top of the page (the radio-down banner, the
# decision reviews due), not among the panels.
_steward_banners: list[PanelProvider] = []
_control_room_banners: list[PanelProvider] = []
# Shown under the control room's map rather than among the panels (supporters' reports queue).
_control_room_map: list[PanelProvider] = []


def register_steward_panel(provider: PanelProvider) -> None:
    if provider not in _steward:
        _steward.append(provider)


def register_control_room_panel(provider: PanelProvider) -> None:
    if provider not in _control_room:
        _control_room.append(provider)


def register_steward_banner(provider: PanelProvider) -> None:
    if provider not in _steward_banners:
        _steward_banners.append(provider)


def register_control_room_banner(provider: PanelProvider) -> None:
    if provider not in _control_room_banners:
        _control_room_banners.append(provider)


def register_control_room_map_panel(provider: PanelProvider) -> None:
    if provider not in _control_room_map:
        _control_room_map.append(provider)


def _panels(providers: list[PanelProvider], user: Any, fixture: Any) -> list[Panel]:
    return [panel for provider in providers if (panel := provider(user, fixture)) is not None]


def steward_panels(user: Any, fixture: Any) -> list[Panel]:
    return _panels(_steward, user, fixture)


def control_room_panels(user: Any, fixture: Any) -> list[Panel]:
    return _panels(_control_room, user, fixture)


def steward_banners(user: Any, fixture: Any) -> list[Panel]:
    return _panels(_steward_banners, user, fixture)


def control_room_banners(user: Any, fixture: Any) -> list[Panel]:
    return _panels(_control_room_banners, user, fixture)


def control_room_map_panels(user: Any, fixture: Any) -> list[Panel]:
    return _panels(_control_room_map, user, fixture)
