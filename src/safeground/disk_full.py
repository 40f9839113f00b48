"""Whether an error means the server cannot store anything just now: its disk is full, or its
database refuses every write. Either way nothing was written, reads still work, and the same
request succeeds once space returns, so it is answered 503 with Retry-After
(safeground.errors.StorageFull), never a 500 (docs/adr/0024-full-disk-and-long-runs.md).

Recognised, wherever it is met (a file's write, SQLite, PostgreSQL, the lean scan route):

- an OSError ENOSPC (no space left), EDQUOT (over quota) or EFBIG (over the file size limit);
- SQLite's SQLITE_FULL ("database or disk is full");
- PostgreSQL's disk_full (53100: "could not extend file", "No space left on device") and
  read_only_sql_transaction (25006: a database or role with `default_transaction_read_only`,
  a standby, a server that went read-only to protect itself).
"""

import errno
import sqlite3

import psycopg

FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
REFUSING_SQLSTATES = frozenset({"53100", "25006"})


def storage_full(error: BaseException) -> bool:
    """`error`, or the driver's error Django wrapped it around, says nothing can be stored."""
    seen = 0
    cause: BaseException | None = error
    while cause is not None and seen < 5:  # Django's wrapper, the driver's, an OSError inside
        if isinstance(cause, sqlite3.OperationalError):
            if getattr(cause, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_FULL:
                return True
        elif isinstance(cause, psycopg.Error):
            if cause.sqlstate in REFUSING_SQLSTATES:
                return True
        elif isinstance(cause, OSError) and cause.errno in FULL_ERRNOS:
            return True
        cause = cause.__cause__ or cause.__context__
        seen += 1
    return False
