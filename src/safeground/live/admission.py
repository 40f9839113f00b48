"""Who may open a fixture's live socket: the reads each handshake makes, kept lean.

After a server restart every screen of the match reconnects within seconds (issue 17's reconnect
storm, docs/adr/0002-live-fan-out.md, Update 4). Per socket the admission reads the session, the
user, their memberships and a steward's post; the fixture itself (its ground and shares, the same
for every socket) is read once per process and kept for SAFEGROUND_LIVE_FIXTURE_CACHE_SECONDS.

What is kept, and for how long a change takes to be honoured by a new socket:
- a share withdrawn (an organisation no longer works the match): up to the bound above;
- a membership removed, a user deactivated, a session logged out, a second factor missing: at once
  (read for every socket, never kept).
A socket already open keeps the Viewer it was admitted with until it reconnects (ADR 0002).
"""

from __future__ import annotations

import threading
import time
from importlib import import_module
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user
from django.db import close_old_connections, connection
from django.http import Http404, HttpRequest

from .events import Viewer
from .viewers import viewer_for

CLOSE_NOT_LOGGED_IN = 4401
CLOSE_FORBIDDEN = 4403
CLOSE_NO_FIXTURE = 4404

_kept: dict[int, tuple[float, Any]] = {}  # fixture id -> (monotonic time it expires, fixture)
_kept_lock = threading.Lock()
_load_lock = threading.Lock()  # a storm's first sockets read the fixture once, not each
KEPT_FIXTURES = 64  # bound on fixtures kept per process (a league's match day)


def admit(*, session_key: str | None, fixture_id: int) -> Viewer | int:
    """Session, user, second factor, fixture and memberships: a Viewer or a close code."""
    reads_begin()
    try:
        if not session_key:
            return CLOSE_NOT_LOGGED_IN
        request = HttpRequest()
        request.session = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
        user = get_user(request)
        if not user.is_authenticated:
            return CLOSE_NOT_LOGGED_IN
        if not _second_factor_passed(user, request.session):
            return CLOSE_NOT_LOGGED_IN
        from safeground.accounts.permissions import can_view_fixture

        fixture = fixture_kept(fixture_id)
        if fixture is None:
            return CLOSE_NO_FIXTURE
        if not can_view_fixture(user, fixture):
            return CLOSE_FORBIDDEN
        return viewer_for(user, fixture)
    finally:
        reads_end()


def reads_begin() -> None:
    """Before a socket's reads on a pool thread (admission, catch-up)."""
    if connection.vendor != "sqlite":
        close_old_connections()


def reads_end() -> None:
    """After them: a PostgreSQL connection goes back to its pool; an SQLite one stays open with
    the thread, unless it met an error. Opening an SQLite connection (WAL pragmas) cost more than
    an admission's reads (1-4 ms against ~1 ms a query, measured), twice per socket."""
    if connection.vendor == "sqlite":
        if connection.errors_occurred:
            connection.close()
        return
    close_old_connections()


def fixture_kept(fixture_id: int) -> Any:
    """The fixture with its ground and shares (None if there is none), read at most once per
    SAFEGROUND_LIVE_FIXTURE_CACHE_SECONDS per process. Shared read-only by the admitting
    threads."""
    bound = settings.SAFEGROUND_LIVE_FIXTURE_CACHE_SECONDS
    if bound <= 0:
        return _fixture_read(fixture_id)
    hit = _fixture_hit(fixture_id)
    if hit is not None:
        return hit
    with _load_lock:
        hit = _fixture_hit(fixture_id)  # another socket read it while this one waited
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
    from safeground.matches.selectors import fixture_with_shares

    try:
        return fixture_with_shares(fixture_id)
    except Http404:
        return None


def _second_factor_passed(user: Any, session: Any) -> bool:
    from django_otp import DEVICE_ID_SESSION_KEY
    from django_otp.models import Device

    from safeground.accounts.permissions import needs_second_factor

    if not settings.SAFEGROUND_REQUIRE_2FA or not needs_second_factor(user):
        return True
    persistent_id = session.get(DEVICE_ID_SESSION_KEY)
    device = Device.from_persistent_id(persistent_id) if persistent_id else None
    return device is not None and device.user_id == user.pk and device.confirmed
