"""Whether a request wrote anything: a test takes `rows_written()` before and after it and
compares. One query either way (the sweeps take it around hundreds of requests, where a query per
model was most of their time):

- PostgreSQL: every table's rows inserted, updated and deleted so far in this transaction
  (`pg_stat_xact_user_tables`; the test and its requests share the transaction), so a write is
  seen even where a count would not change (a row updated, or one added and one removed);
- SQLite: the row count of every table, one `SELECT count(*)` per table joined with UNION ALL.
"""

from django.apps import apps
from django.db import connection

PG_WRITES = """
    SELECT relname, n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_xact_user_tables
    WHERE schemaname = current_schema() AND n_tup_ins + n_tup_upd + n_tup_del > 0
"""


def _tables() -> list[tuple[str, str]]:
    """(model label, table) of every installed model's table, the many-to-many ones too."""
    tables: dict[str, str] = {}
    for model in apps.get_models(include_auto_created=True):
        if model._meta.managed and not model._meta.proxy:
            tables.setdefault(model._meta.db_table, model._meta.label)
    return sorted((label, table) for table, label in tables.items())


def rows_written() -> dict[str, object]:
    """What this transaction has written so far (PostgreSQL), or every table's row count."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(PG_WRITES)
            return {table: tuple(counts) for table, *counts in cursor.fetchall()}
        return _row_counts(cursor)


def _row_counts(cursor) -> dict[str, object]:
    tables = _tables()
    quote = connection.ops.quote_name
    cursor.execute(
        " UNION ALL ".join(
            f"SELECT {index}, count(*) FROM {quote(table)}"
            for index, (_, table) in enumerate(tables)
        )
    )
    counts = dict(cursor.fetchall())
    assert len(counts) == len(tables) > 50, "a table was not counted"
    return {label: counts[index] for index, (label, _) in enumerate(tables)}
