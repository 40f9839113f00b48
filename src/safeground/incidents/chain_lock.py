"""Holding a match's chain while an entry is appended: the lock, the head read under it, and
SQLite's one writer at a time (docs/adr/0003-log-chain.md). The appends are in services.py."""

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from django.db import connection

from safeground.accounts.models import User
from safeground.clock import stored_time
from safeground.matches.models import Fixture

from .chain import GENESIS
from .models import LogEntry

_sqlite_writers = threading.Lock()


@contextmanager
def one_sqlite_writer() -> Iterator[None]:
    """On SQLite, this process's appends wait here, each in turn, before they begin.

    SQLite lets one writer in and makes the others poll for its lock, sleeping up to 100 ms a try
    and first come not first served: a few appends at once waited seconds (bench_live.py). A
    thread waiting on a lock is woken as soon as it is free. Inside a transaction already begun
    (a test's) waiting here could deadlock with the holder, so it does not. PostgreSQL queues
    waiters on its row lock and needs none of this."""
    if connection.vendor != "sqlite" or connection.in_atomic_block:
        yield
        return
    with _sqlite_writers:
        yield


def log_chain_lock(fixture: Fixture) -> None:
    """Hold the match's chain until the transaction ends: one writer at a time per match.

    PostgreSQL locks the fixture's row; SQLite needs nothing more, as its IMMEDIATE transactions
    already let one writer in at a time. Plain SQL: every append runs it, and the ORM's
    compiling would cost more than the round trip.

    NO KEY UPDATE, not UPDATE: appends still queue on it one by one, but a scan or any other row
    inserted with a key to the fixture (which takes KEY SHARE on it) does not wait behind the
    log. FOR UPDATE made every turnstile wait for every append to its match."""
    if connection.features.has_select_for_no_key_update:
        with connection.cursor() as cursor:
            cursor.execute(LOCK_SQL, [fixture.pk])


LOCK_SQL = f"SELECT id FROM {Fixture._meta.db_table} WHERE id = %s FOR NO KEY UPDATE"
# The chain's head, and the entry this author already sent with this idempotency key (if any):
# one round trip under the lock (read after it, so the head is the one the lock holder left).
_ENTRIES = LogEntry._meta.db_table
HEAD_SQL = (
    f"SELECT seq, hash, logged_at, (SELECT id FROM {_ENTRIES} WHERE fixture_id = %s"
    " AND author_id = %s AND idempotency_key = %s AND idempotency_key <> '')"
    f" FROM {_ENTRIES} WHERE fixture_id = %s ORDER BY seq DESC LIMIT 1"
)


@dataclass(frozen=True)
class ChainHead:
    """The last entry of a match's chain, as read under its lock."""

    seq: int
    hash: str
    logged_at: datetime | None
    repeated_id: int | None  # the author's entry already stored with this idempotency key


def chain_head(fixture: Fixture, author: User | None, key: str) -> ChainHead:
    """Lock the match's chain (log_chain_lock) and read, under the lock, its head and the
    author's entry stored with `key`.

    On PostgreSQL the lock and the read go in one round trip, two statements sent together: each
    statement of a query reads its own snapshot, taken when it starts, so the head is read after
    the lock is held and sees what the lock's last holder committed."""
    head_args = [fixture.pk, author.pk if author else None, key, fixture.pk]
    with connection.cursor() as cursor:
        if connection.features.has_select_for_no_key_update and _sends_together(cursor):
            cursor.execute(f"{LOCK_SQL}; {HEAD_SQL}", [fixture.pk, *head_args])
            cursor.nextset()
        else:
            log_chain_lock(fixture)
            cursor.execute(HEAD_SQL, head_args)
        row = cursor.fetchone()
    if row is None:  # an empty log: nothing to repeat either
        return ChainHead(0, GENESIS, None, None)
    seq, hash_, logged_at, repeated = row
    return ChainHead(seq, hash_, stored_time(logged_at), repeated)


def _sends_together(cursor: Any) -> bool:
    """Whether the driver's cursor takes several statements in one query: psycopg's client-side
    binding cursor, Django's default (not with OPTIONS server_side_binding)."""
    return isinstance(cursor.cursor, psycopg.ClientCursor)
