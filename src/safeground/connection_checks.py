"""The PostgreSQL pool's check of a connection before a request gets it (settings.base).

The check is an empty statement, a round trip, and it finds a connection that died while it sat
in the pool (after an outage, each idle one is dead and would otherwise fail a request). Run for
every request it was a tenth of a report's time in the surge (docs/adr/0012, update 7). A
connection given back to the pool less than FRESH_SECONDS ago was working then, and is handed out
as it is; one idle longer is checked as before, and a dead one replaced. A database that comes
back after a restart or a cut has been away longer than that, so every connection that waited
through it is checked. What the second costs is a request that meets a cut inside it: refused
503 with Retry-After, nothing stored, as any request under way at the cut is.
"""

import time
from typing import Any

from psycopg_pool import ConnectionPool

FRESH_SECONDS = 1.0
_GIVEN_BACK = "_safeground_given_back"


def given_back(connection: Any) -> None:
    """The pool's `reset`: when the connection came back, working, from a request."""
    setattr(connection, _GIVEN_BACK, time.monotonic())


def checked(connection: Any) -> None:
    """The pool's `check`: raises if a connection idle longer than FRESH_SECONDS is dead."""
    back = getattr(connection, _GIVEN_BACK, None)
    if back is not None and time.monotonic() - back < FRESH_SECONDS:
        return
    ConnectionPool.check_connection(connection)
