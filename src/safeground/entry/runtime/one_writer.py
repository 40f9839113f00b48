"""Scans decided for the event loop on SQLite: one writer per process, as PostgreSQL's one
statement in flight (runtime.loop). The loop hands each scan to the group commit's writer thread
(safeground.group_commit.OnThread, `group-commit-entry-scans`); the scans that arrive while it
writes a batch wait and go together in the next: one transaction, one commit, the same three
statements whatever the batch's size (entry.decision.decide_sqlite).

The writer keeps a connection of its own, opened as Django opens one (its functions, foreign
keys, WAL and synchronous=NORMAL from settings.SQLITE_OPTIONS) but kept for the life of the
process: reopening it whenever the writer is idle cost more than a scan. It waits at most a
scan's deadline for SQLite's write lock (another process's writer, an offline upload).
"""

import sqlite3
from typing import Any

from django.conf import settings
from django.db import connections

from safeground.group_commit import OnThread, Policy, connection_failed

from .. import decision
from ..decision import Outcome, ScanContext


def _ticket_and_nonce(ctx: ScanContext) -> tuple[tuple[Any, ...], ...]:
    """As on PostgreSQL: a batch moves each ticket and stores each nonce at most once."""
    return (("ticket", ctx.fixture_id, ctx.barcode), ("nonce", ctx.device_id, ctx.nonce))


def _every_scan_would_fail(error: Exception) -> bool:
    """The write lock not had within the deadline, the file gone: each scan alone would meet it
    again, so the batch fails at once (a 503 for each). A refusal of one scan's row (a foreign
    key, a constraint: sqlite3.IntegrityError) splits the batch instead."""
    return isinstance(error, sqlite3.OperationalError) or connection_failed(error)


BATCH_LIMIT = 64  # scans in one transaction at most, as on PostgreSQL
POLICY = Policy(limit=BATCH_LIMIT, keys=_ticket_and_nonce, repeats=_every_scan_would_fail)

_connection: sqlite3.Connection | None = None


def _writer_connection() -> sqlite3.Connection:
    global _connection
    if _connection is None:
        django = connections["default"]
        params = django.get_connection_params()
        params["timeout"] = settings.SAFEGROUND_SCAN_DEADLINE_SECONDS
        params.pop("detect_types", None)  # decide_sqlite reads the stored text itself
        opened = django.get_new_connection(params)
        opened.isolation_level = None  # no implicit BEGIN: each batch's is its own
        _connection = opened
    return _connection


def write(batch: list[ScanContext]) -> list[Outcome]:
    """`batch` decided in one transaction on the writer's connection (the writer thread's)."""
    conn = _writer_connection()
    try:
        conn.execute("BEGIN IMMEDIATE")
        outcomes = decision.decide_sqlite(conn.cursor(), batch)
        conn.execute("COMMIT")  # a deferred foreign key fails here, and is rolled back below
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return outcomes


# `write` looked up at each batch (tests count the batches by replacing it).
batches: OnThread[ScanContext, Outcome] = OnThread(
    lambda batch: write(batch), POLICY, name="entry-scans"
)


async def decide_async(ctx: ScanContext) -> Outcome:
    """The scan decided with whatever others were waiting; committed when this returns.
    Cancelled (the scan's deadline passed) before its batch was taken, it is never decided."""
    return await batches.ask_async(ctx)


def writer_close() -> None:
    """Close the writer's connection once the writer is idle (a test that deletes the database
    file; a worker shutting down). The next batch opens another."""
    global _connection
    batches.settle()
    if _connection is not None:
        _connection.close()
        _connection = None
