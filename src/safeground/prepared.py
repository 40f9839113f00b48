"""Statements prepared once per connection on PostgreSQL, for the hot paths (a scan's decision,
the log's append): parsing and planning them cost more than running them (ADR 0005, ADR 0013)."""

import sys
from typing import Any

import psycopg
from django.db import connection

# Django opens connections with prepare_threshold=None, which makes psycopg ignore prepare=True;
# this lets an explicit prepare through and never prepares anything on its own.
ONLY_WHEN_ASKED = sys.maxsize


class _PreparedCursor(psycopg.Cursor[Any]):
    """Server-side binding (psycopg's native dumpers, where Django's client-side binding quotes
    each value in Python), each statement prepared the first time it runs on its connection."""

    def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
        return super().execute(query, params, prepare=True)


def prepared_cursor() -> Any:
    """A PostgreSQL cursor whose statements are prepared once per (pooled) connection, wrapped as
    Django wraps its own: the query is counted and logged like any other, its errors mapped."""
    connection.ensure_connection()
    raw = connection.connection
    if raw.prepare_threshold is None:
        raw.prepare_threshold = ONLY_WHEN_ASKED
    with connection.wrap_database_errors:
        return connection._prepare_cursor(_PreparedCursor(raw))  # type: ignore[attr-defined]
