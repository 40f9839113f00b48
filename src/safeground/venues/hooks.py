"""What apps above the venues add to a ground's page (safeground.hooks), without the venues
importing them: each provider answers, for the user and the ground, the URL of an htmx fragment
the page loads (or None: nothing for this user). The supporters' seat labels are one."""

from typing import Any

from safeground.hooks import Kind, Timing, found

from .models import Ground

ground_panels: Kind[[Any, Ground], str | None, list[str]] = Kind(
    "venues.ground_panels", Timing.AT_RENDER, found
)
