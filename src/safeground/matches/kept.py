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

import threading
import time
from typing import Any

from django.conf import settings
from django.http import Http404

_kept: dict[int, tuple[float, Any]] = {}  # fixture id -> (monotonic time it expires, fixture)
_kept_lock = threading.Lock()
_load_lock = threading.Lock()  # a storm's first requests read the fixture once, not each
KEPT_FIXTURES = 64  # bound on fixtures kept per process (a league's match day)


def fixture_kept(fixture_id: int) -> Any:
    """The fixture with its ground and shares (None if there is none), read at most once per
    SAFEGROUND_LIVE_FIXTURE_CACHE_SECONDS per process."""
    bound = settings.SAFEGROUND_LIVE_FIXTURE_CACHE_SECONDS
    if bound <= 0:
        return _fixture_read(fixture_id)
    hit = _fixture_hit(fixture_id)
    if hit is not None:
        return hit
    with _load_lock:
        hit = _fixture_hit(fixture_id)  # another thread read it while this one waited
        if hit is not None:
            return hit
        fixture = _fixture_read(fixture_id)
        if fixture is not None:  # a fixture added a moment ago is never refused for a while
            with _kept_lock:
                now = time.monotonic()
                for old in [k for k, (until, _) in _kept.items() if until <= now]:
                    del _kept[old]
                if len(_kept) >= KEPT_FIXTURES:
                    _kept.clear()
                _kept[fixture_id] = (now + bound, fixture)
        return fixture


def fixtures_forget() -> None:
    """Drop every kept fixture (tests; a process that must honour a change at once)."""
    with _kept_lock:
        _kept.clear()


def _fixture_hit(fixture_id: int) -> Any:
    with _kept_lock:
        found = _kept.get(fixture_id)
    if found is not None and found[0] > time.monotonic():
        return found[1]
    return None


def _fixture_read(fixture_id: int) -> Any:
    from .selectors import fixture_with_shares

    try:
        return fixture_with_shares(fixture_id)
    except Http404:
        return None
