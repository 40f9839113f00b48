"""A fixture with its ground and shares, read at most once per process every
SAFEGROUND_LIVE_FIXTURE_CACHE_SECONDS: what deciding who may see or write a match needs, at the
moments everyone asks at once (a reconnect storm's sockets, live/admission.py; the reports of a
crisis minute, incidents/api.py).

Read for every request it was five queries, each a wait for the GIL back while the fan-out
writes (docs/adr/0012-fan-out-at-crisis-load.md). A share withdrawn is honoured within the bound;
a membership, a session, a user are read for every request and never kept. The object is shared
by the process's threads: read-only, except the per-fixture maps the log keeps on it
(incidents.selectors.zone_map), which are the same for every thread.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404

from safeground.kept import Kept

# A league's match day at most; a storm's first requests read the fixture once, not each.
_fixtures = Kept("SAFEGROUND_LIVE_FIXTURE_CACHE_SECONDS", max_entries=64, one_first_load=True)


def fixture_kept(fixture_id: int) -> Any:
    """The fixture with its ground and shares (None if there is none), read at most once per
    SAFEGROUND_LIVE_FIXTURE_CACHE_SECONDS per process."""
    return _fixtures.get(fixture_id, lambda: _fixture_read(fixture_id))


def fixtures_forget() -> None:
    """Drop every kept fixture (tests; a process that must honour a change at once)."""
    _fixtures.clear()


def _fixture_read(fixture_id: int) -> Any:
    from .selectors import fixture_with_shares

    try:
        return fixture_with_shares(fixture_id)
    except Http404:
        return None
