"""Append-only in the database itself: triggers refuse UPDATE and DELETE of entry conflicts
(as incidents/db.py does for the log)."""

from django.db.backends.base.base import BaseDatabaseWrapper

TABLE = "entry_entryconflict"
MESSAGE = "entry conflicts are append-only"

SQL = {
    "sqlite": [
        f"CREATE TRIGGER IF NOT EXISTS {TABLE}_no_update BEFORE UPDATE ON {TABLE} "
        f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END",
        f"CREATE TRIGGER IF NOT EXISTS {TABLE}_no_delete BEFORE DELETE ON {TABLE} "
        f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END",
    ],
    "postgresql": [
        f"CREATE OR REPLACE FUNCTION {TABLE}_refuse() RETURNS trigger LANGUAGE plpgsql AS "
        f"$$ BEGIN RAISE EXCEPTION '{MESSAGE}'; END $$",
        f"DROP TRIGGER IF EXISTS {TABLE}_append_only ON {TABLE}",
        f"CREATE TRIGGER {TABLE}_append_only BEFORE UPDATE OR DELETE ON {TABLE} "
        f"FOR EACH ROW EXECUTE FUNCTION {TABLE}_refuse()",
    ],
}

DROP_SQLITE = [
    f"DROP TRIGGER IF EXISTS {TABLE}_no_update",
    f"DROP TRIGGER IF EXISTS {TABLE}_no_delete",
]


def install_append_only_triggers(connection: BaseDatabaseWrapper) -> None:
    with connection.cursor() as cursor:
        for statement in SQL.get(connection.vendor, []):
            cursor.execute(statement)
