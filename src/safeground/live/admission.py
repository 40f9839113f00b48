"""Who may open a fixture's live socket: the reads each handshake makes, kept lean.

After a server restart every screen of the match reconnects within seconds (issue 17's reconnect
storm, docs/adr/0002-live-fan-out.md, Update 5). Sockets that knock while an admission is being
read wait and are admitted together in the next (live/batches.py): the sessions, users,
memberships, second factors and stewards' posts of all of them in one query each. The fixture
itself (its ground and shares, the same for every socket) is read once per process and kept for
SAFEGROUND_LIVE_FIXTURE_CACHE_SECONDS (matches/kept.py).

What is kept, and for how long a change takes to be honoured by a new socket:
- a share withdrawn (an organisation no longer works the match): up to the bound above;
- a membership removed, a user deactivated, a session logged out, a second factor missing: at once
  (read for every socket, never kept).
A socket already open keeps the Viewer it was admitted with until it reconnects (ADR 0002).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import close_old_connections, connection

from safeground.matches.kept import fixture_kept

from .events import Viewer
from .viewers import viewers_for

CLOSE_NOT_LOGGED_IN = 4401
CLOSE_FORBIDDEN = 4403
CLOSE_NO_FIXTURE = 4404


@dataclass(frozen=True)
class Knock:
    """A socket asking to be let in: its session cookie and the fixture it wants."""

    session_key: str | None
    fixture_id: int
    after: int | None = None  # the last seq its screen showed (a reconnect), for the catch-up


def admit(*, session_key: str | None, fixture_id: int) -> Viewer | int:
    """One socket's answer: a Viewer, or the close code that refuses it."""
    return admit_many([Knock(session_key, fixture_id)])[0]


def admit_many(knocks: Sequence[Knock]) -> list[Viewer | int]:
    """Each knock's Viewer or close code, read for all of them together: the sessions, users,
    memberships and second factors in one query each (accounts.sessions), the fixture kept, the
    stewards' posts in one query per fixture. The caller holds the connection (reads_begin)."""
    from safeground.accounts.sessions import signed_in_users

    users = signed_in_users({knock.session_key for knock in knocks if knock.session_key})
    at: dict[int, list[Any]] = defaultdict(list)  # fixture id -> the signed-in users knocking
    for knock in knocks:
        if knock.session_key in users:
            at[knock.fixture_id].append(users[knock.session_key])
    viewers = {fixture_id: _viewers_at(fixture_id, them) for fixture_id, them in at.items()}
    answers: list[Viewer | int] = []
    for knock in knocks:
        user = users.get(knock.session_key or "")
        if user is None:
            answers.append(CLOSE_NOT_LOGGED_IN)
        elif (found := viewers[knock.fixture_id]) is None:
            answers.append(CLOSE_NO_FIXTURE)
        else:
            answers.append(found.get(user.pk, CLOSE_FORBIDDEN))
    return answers


def _viewers_at(fixture_id: int, users: list[Any]) -> dict[int, Viewer] | None:
    """user id -> Viewer, for those of the users who may view the fixture (None: no fixture)."""
    from safeground.accounts.permissions import can_view_fixture

    fixture = fixture_kept(fixture_id)
    if fixture is None:
        return None
    allowed = {user.pk: user for user in users if can_view_fixture(user, fixture)}
    return {viewer.user_id: viewer for viewer in viewers_for(list(allowed.values()), fixture)}


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
