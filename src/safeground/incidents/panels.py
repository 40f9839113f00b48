"""Panels that apps above the log add to its pages (the steward's phone, the control room).

The log's pages are the screens people have open on match day; deployment (posts, check-in,
pre-match checks) lives above the log and must show there without the log importing it. An app
registers a panel provider in its AppConfig.ready() (safeground.hooks): given the user and the
fixture, it answers the URL of an htmx fragment to load into the page (or None: nothing for this
user) and the live event types after which the fragment is fetched again
(static/safeground/live-1.js `refreshPanels`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from safeground.hooks import Kind, Timing, found


@dataclass(frozen=True)
class Panel:
    url: str
    refresh_on: tuple[str, ...] = ()  # live event types that bring a fresh copy
    top: bool = False  # the control room: above the log (an alarm), not in the side tabs
    # A map panel far down the control room: its id, and the words of a skip link to it at the
    # top of the page, beside a count the fragment keeps there (an element `<anchor>-count`
    # swapped out of band on each refresh).
    anchor: str = ""
    skip: Any = ""

    @property
    def refresh_types(self) -> str:
        return " ".join(self.refresh_on)


PanelProvider = Callable[[Any, Any], Panel | None]  # (user, fixture) -> a panel, or None


def _kind(name: str) -> Kind[[Any, Any], Panel | None, list[Panel]]:
    """Providers asked in registration order; the page shows the panels they answer."""
    return Kind(f"incidents.{name}", Timing.AT_RENDER, found)


steward_panels = _kind("steward_panels")
control_room_panels = _kind("control_room_panels")
# Banners: the same kind of fragment, shown at the top of the page (the radio-down banner, the
# decision reviews due), not among the panels.
steward_banners = _kind("steward_banners")
control_room_banners = _kind("control_room_banners")
# Shown under the control room's map rather than among the panels (supporters' reports queue).
control_room_map_panels = _kind("control_room_map_panels")
