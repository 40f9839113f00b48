"""Scans decided on the event loop on SQLite: one writer per process, as PostgreSQL's one
statement in flight (runtime.loop). The scans that arrive while a batch is being written wait
and go together in the next (safeground.group_commit.OnLoop): one transaction, one commit, the
same three statements whatever the batch's size (entry.decision.decide_sqlite).

SQLite runs in the process, so the batch runs on the loop itself, as psycopg's answer is read
there on PostgreSQL: a first version handed each batch to a writer thread (group_commit.OnThread)
and spent more on the hand-off and the two threads' turns at the GIL than on the batch
(docs/adr/0005-turnstile-decisions.md, Session 6). Only the wait for the write lock could hold
the loop, so it is never waited for there: the connection's busy timeout is 0, and while another
process's writer (or an offline upload) holds the lock the batch tries again every LOCK_POLL
seconds, the loop serving other requests meanwhile, for at most a scan's deadline.

The connection is the process's own, opened as Django opens one (its foreign keys, WAL and
synchronous=NORMAL from settings.SQLITE_OPTIONS) on a scan thread, and kept: reopening it cost
more than a scan.
"""

import asyncio
import sqlite3
import time
from typing import Any

from django.conf import settings
from django.db import connections

from safeground.group_commit import OnLoop, Policy, connection_failed

from .. import decision
from ..decision import Outcome, ScanContext
from .threads import in_scan_thread

BATCH_LIMIT = 64  # scans in one transaction at most, as on PostgreSQL
LOCK_POLL = 0.001  # seconds between attempts at the write lock while another writer holds it


def _ticket_and_nonce(ctx: ScanContext) -> tuple[tuple[Any, ...], ...]:
    """As on PostgreSQL: a batch moves each ticket and stores each nonce at most once."""
    return (("ticket", ctx.fixture_id, ctx.barcode), ("nonce", ctx.device_id, ctx.nonce))


def _every_scan_would_fail(error: Exception) -> bool:
    """The write lock not had within the deadline, the file gone: each scan alone would meet it
    again, so the batch fails at once (a 503 for each). A refusal of one scan's row (a foreign
    key, a constraint: sqlite3.IntegrityError) splits the batch instead."""
    return isinstance(error, sqlite3.OperationalError) or connection_failed(error)


POLICY = Policy(limit=BATCH_LIMIT, keys=_ticket_and_nonce, repeats=_every_scan_would_fail)

_connection: sqlite3.Connection | None = None
_batches: tuple[asyncio.AbstractEventLoop, OnLoop[ScanContext, Outcome]] | None = None


def _open() -> sqlite3.Connection:
    django = connections["default"]
    params = django.get_connection_params()
    params["timeout"] = 0  # never wait for the lock inside SQLite: write() waits on the loop
    params.pop("detect_types", None)  # decide_sqlite reads the stored text itself
    opened = django.get_new_connection(params)
    opened.isolation_level = None  # no implicit BEGIN: each batch's is its own
    return opened


async def _writer_connection() -> sqlite3.Connection:
    global _connection
    if _connection is None:
        # On a scan thread: Django opens no connection from async code.
        opened = await in_scan_thread(_open)
        if _connection is None:
            _connection = opened
        else:  # another loop of this process opened one meanwhile (tests)
            opened.close()
    return _connection


def _locked(error: sqlite3.OperationalError) -> bool:
    """SQLITE_BUSY, or one of its extended codes: another connection holds the write lock."""
    return getattr(error, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_BUSY


async def write(batch: list[ScanContext]) -> list[Outcome]:
    """`batch` decided in one transaction on the process's writer connection."""
    conn = await _writer_connection()
    give_up = time.monotonic() + settings.SAFEGROUND_SCAN_DEADLINE_SECONDS
    while True:
        try:
            conn.execute("BEGIN IMMEDIATE")
            break
        except sqlite3.OperationalError as error:
            if not _locked(error) or time.monotonic() >= give_up:
                raise
        await asyncio.sleep(LOCK_POLL)
    try:
        outcomes = decision.decide_sqlite(conn.cursor(), batch)
        conn.execute("COMMIT")  # a deferred foreign key fails here, and is rolled back below
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return outcomes


async def decide_async(ctx: ScanContext) -> Outcome:
    """The scan decided with whatever others were waiting; committed when this returns.
    Cancelled (its deadline passed) before its batch was taken, it is never decided."""
    global _batches
    running = asyncio.get_running_loop()
    if _batches is None or _batches[0] is not running:
        # `write` looked up at each batch (tests count the batches by replacing it).
        _batches = (running, OnLoop(lambda batch: write(batch), POLICY))
    return await _batches[1].submit(ctx)


def writer_close() -> None:
    """Close the writer's connection (a test that changes the settings it was opened with). The
    next batch opens another."""
    global _connection, _batches
    _batches = None
    if _connection is not None:
        _connection.close()
        _connection = None
