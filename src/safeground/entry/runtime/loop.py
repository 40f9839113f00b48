"""Scans decided on the event loop (PostgreSQL): the decision's one statement
(entry.decision.DECIDE_SQL) on an async connection of the process's own, with no hop to a thread
and back for a scan. Scans that arrive while the statement is running wait and go together in the
next one (group commit): one statement, one commit for all of them. What the loop cannot do
without Django's database access runs on the scan threads (runtime.threads).

On SQLite the loop does the same but for the database call: its scans go to the process's one
writer (runtime.one_writer), which decides those waiting together in one transaction.
"""

import asyncio
import functools
import os
import sqlite3
import weakref
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
from django.conf import settings
from django.db import InterfaceError, OperationalError, connections
from psycopg_pool import AsyncConnectionPool

from safeground.group_commit import OnLoop, Policy
from safeground.prepared import ONLY_WHEN_ASKED

from .. import decision, scans
from ..decision import Outcome, ScanContext
from . import lookups, one_writer
from .threads import in_scan_thread

# Statements in flight per process for scans decided on the loop, each on its own connection.
# Scans that arrive while they are all busy wait, and go together in the next statement: its fixed
# cost (starting the executor, the foreign-key checks, the commit) is then shared. One per process
# was the fastest measured (docs/adr/0005-turnstile-decisions.md); at a light load a scan finds
# the connection free and goes alone.
CONNECTIONS = max(1, int(os.environ.get("SAFEGROUND_ENTRY_CONNECTIONS", "1")))
BATCH_LIMIT = 64  # scans in one statement at most
# The database is down or unreachable (psycopg's pool timing out is one of these; SQLite's write
# lock not had within the deadline): a scan gets a 503 with Retry-After, not a 500
# (runtime/asgi.py).
DATABASE_DOWN = (
    OperationalError,
    InterfaceError,
    psycopg.OperationalError,
    psycopg.InterfaceError,
    sqlite3.OperationalError,
)


def _ticket_and_nonce(ctx: ScanContext) -> tuple[tuple[Any, ...], ...]:
    """A second scan of a ticket (or a nonce sent again) waits for the next statement, so a
    statement moves each ticket at most once."""
    return (("ticket", ctx.fixture_id, ctx.barcode), ("nonce", ctx.device_id, ctx.nonce))


# A scan past its deadline is answered 503 (runtime/asgi.py) and never decided (its answer is
# cancelled: the group commit leaves it out). A statement the server refused wrote nothing (one
# statement): its scans go again one at a time, so one scan's fault is not the others'; one that
# failed on the connection or the pool fails them all (each would fail again).
POLICY = Policy(limit=BATCH_LIMIT, keys=_ticket_and_nonce)


@dataclass
class _Scans:
    """One event loop's connections and the scans waiting for them."""

    pool: AsyncConnectionPool
    batches: OnLoop[ScanContext, Outcome | None]


async def statement(pool: AsyncConnectionPool, batch: list[ScanContext]) -> list[Outcome | None]:
    """The decision's one statement for `batch`, on one of the pool's connections."""
    async with pool.connection() as conn:
        cursor = _cursors.get(conn)
        if cursor is None:
            cursor = _cursors[conn] = conn.cursor()
        await cursor.execute(DECIDE_SQL_BYTES, decision.params(batch), prepare=True)
        rows = await cursor.fetchall()
    return decision.outcomes(batch, rows)


_batches: tuple[asyncio.AbstractEventLoop, _Scans] | None = None
# One cursor kept per connection (it keeps the adapters it found for each parameter's type), and
# the statement as bytes (not encoded again for every batch).
_cursors: weakref.WeakKeyDictionary[psycopg.AsyncConnection[Any], psycopg.AsyncCursor[Any]] = (
    weakref.WeakKeyDictionary()
)
DECIDE_SQL_BYTES = decision.DECIDE_SQL.encode()


@functools.cache
def _vendor() -> str:
    # Read once: on the loop every request is a new context, and Django would make a new
    # connection object for each one that touched `connection`.
    return connections["default"].vendor


def _postgresql() -> bool:
    return _vendor() == "postgresql"


def on_loop() -> bool:
    """Whether scans are decided from the event loop: the one statement on PostgreSQL, the one
    writer on SQLite."""
    return decision.USE_SQL and _vendor() in ("postgresql", "sqlite")


async def decide_async(ctx: ScanContext) -> Outcome:
    """`decide` for the event loop: the same statement on an async connection, in autocommit,
    with whatever other scans were waiting for one (SQLite: the one writer's transaction); it has
    committed when this returns."""
    if not _postgresql():
        return await one_writer.decide_async(ctx)
    batches = (
        _batches[1] if _batches is not None and _batches[0] is asyncio.get_running_loop() else None
    )
    outcome = await (batches or await _batches_open()).batches.submit(ctx)
    if outcome is not None:
        return outcome
    # The same nonce stored meanwhile by a concurrent request (see decision.decide).
    prior = await in_scan_thread(decision.prior_outcome, ctx)
    return prior  # type: ignore[return-value]


async def _batches_open() -> _Scans:
    """The process's pool and batches, made on its event loop at the first scan (uvicorn has
    one loop per worker; tests run a loop each)."""
    global _batches
    params = connections["default"].get_connection_params()
    params.pop("cursor_factory", None)  # Django's sync cursor class; the pool's are async
    params["autocommit"] = True
    params["prepare_threshold"] = ONLY_WHEN_ASKED
    # These connections run the decision only. Its plan is made once per connection (else
    # PostgreSQL plans it afresh for each batch size), and every lookup in it has a unique index:
    # a sequential scan, chosen while the scans table was small, would stay in that plan as the
    # table grew.
    plan = " ".join(f"-c {name}={value}" for name, value in decision.PLAN_SETTINGS.items())
    params["options"] = " ".join((params.get("options", ""), plan)).strip()
    pool = AsyncConnectionPool(
        kwargs=params,
        min_size=CONNECTIONS,
        max_size=CONNECTIONS,
        # No scan waits longer than its deadline (runtime/asgi.py) for a connection; while the
        # database is away the pool tries again at least every RECONNECT seconds, so scans are
        # decided again within a few seconds of its return.
        timeout=settings.SAFEGROUND_SCAN_DEADLINE_SECONDS,
        reconnect_timeout=settings.SAFEGROUND_DATABASE_RECONNECT_SECONDS,
        open=False,
        name="entry-scans",
    )
    # `statement` looked up at each batch (tests count the statements by replacing it).
    batches = _Scans(
        pool, OnLoop(lambda batch: statement(pool, batch), POLICY, in_flight=CONNECTIONS)
    )
    _batches = (asyncio.get_running_loop(), batches)
    # Opening waits for no connection: a worker starting while the database is away still
    # answers (503) and connects when it returns.
    await pool.open(wait=False)
    return batches


async def scan_pool_ready() -> None:
    """Open this loop's pool and wait until its connections are made (runtime.warm); psycopg's
    PoolTimeout, a DATABASE_DOWN error, when they are not within the scan's deadline. SQLite's
    writer opens its connection at its first batch (a file: no wait to speak of)."""
    if not _postgresql():
        return
    batches = (
        _batches[1] if _batches is not None and _batches[0] is asyncio.get_running_loop() else None
    )
    await (batches or await _batches_open()).pool.wait(settings.SAFEGROUND_SCAN_DEADLINE_SECONDS)


async def scan_pool_close() -> None:
    """Close the pool of the running loop (tests; a worker shutting down closes its sockets)."""
    global _batches
    if _batches is not None and _batches[0] is asyncio.get_running_loop():
        batches, _batches = _batches[1], None
        await batches.pool.close()


async def scan_decide_async(
    *,
    device: lookups.DeviceInfo,
    turnstile: str,
    barcode: str,
    scanned_at: datetime,
    nonce: UUID,
    direction: str = "in",
    now: datetime | None = None,
) -> scans.ScanResult:
    """scan_decide from the event loop (runtime/asgi.py, PostgreSQL): the same checks, statement,
    answer and events; only the database call differs (decide_async, above).

    lookups.NotCached, before anything is written, when a lookup needs the database: the caller
    then decides the scan with scan_decide on a thread, which fills the caches."""
    scan = scans.scan_check(
        device=device,
        turnstile=turnstile,
        barcode=barcode,
        scanned_at=scanned_at,
        nonce=nonce,
        direction=direction,
        now=now,
        cached_only=True,
    )
    outcome = await decide_async(scan.context)
    result = scans.scan_result(scan, outcome)
    if outcome.reason == "banned":
        # Rare, and the bus may be Redis (a blocking client): off the loop. The scan is stored:
        # its announcement goes out even if the scan's deadline passes meanwhile (shield).
        await asyncio.shield(in_scan_thread(scans.scan_announce, scan, outcome, result))
    else:
        scans.scan_announce(scan, outcome, result)
    return result
