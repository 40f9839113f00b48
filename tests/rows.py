"""Row counts of every table, in one query: a test takes them before and after a request to show
the request wrote nothing anywhere.

One `SELECT count(*)` per table, joined with UNION ALL and sent as a single statement (the same
on SQLite and PostgreSQL), in place of a query per model: the sweeps that take them around
hundreds of requests spent most of their time on those round trips. Every table of an installed
model is counted, the many-to-many tables Django makes too."""

from django.apps import apps
from django.db import connection


def _tables() -> list[tuple[str, str]]:
    tables: dict[str, str] = {}
    for model in apps.get_models(include_auto_created=True):
        if model._meta.managed and not model._meta.proxy:
            tables.setdefault(model._meta.db_table, model._meta.label)
    return sorted((label, table) for table, label in tables.items())


def rows_written() -> dict[str, int]:
    """{model label: rows in its table} for every table, from one query."""
    tables = _tables()
    quote = connection.ops.quote_name
    sql = " UNION ALL ".join(
        f"SELECT {index}, count(*) FROM {quote(table)}" for index, (_, table) in enumerate(tables)
    )
    with connection.cursor() as cursor:
        cursor.execute(sql)
        counts = dict(cursor.fetchall())
    assert len(counts) == len(tables) > 50, "a table was not counted"
    return {label: counts[index] for index, (label, _) in enumerate(tables)}
