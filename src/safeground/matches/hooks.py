"""What apps above matches add to a fixture's page (safeground.hooks), without matches
importing them: each provider answers, for the user and the fixture, the URL of an htmx
fragment the page loads (or None: nothing for this user). The league check's progress is one."""

from typing import Any

from safeground.hooks import Kind, Timing, found

from .models import Fixture

fixture_panels: Kind[[Any, Fixture], str | None, list[str]] = Kind(
    "matches.fixture_panels", Timing.AT_RENDER, found
)
