"""Append-only in the database itself: triggers that refuse UPDATE and DELETE on a table, for the
records that must never change (the control-room log, entry conflicts)."""

from dataclasses import dataclass

from django.db.backends.base.base import BaseDatabaseWrapper


@dataclass(frozen=True)
class AppendOnlyTable:
    table: str
    message: str  # what the database says to anyone who tries

    def sql(self, vendor: str) -> list[str]:
        table, message = self.table, self.message
        if vendor == "sqlite":
            return [
                f"CREATE TRIGGER IF NOT EXISTS {table}_no_update BEFORE UPDATE ON {table} "
                f"BEGIN SELECT RAISE(ABORT, '{message}'); END",
                f"CREATE TRIGGER IF NOT EXISTS {table}_no_delete BEFORE DELETE ON {table} "
                f"BEGIN SELECT RAISE(ABORT, '{message}'); END",
            ]
        if vendor == "postgresql":
            return [
                f"CREATE OR REPLACE FUNCTION {table}_refuse() RETURNS trigger LANGUAGE plpgsql AS "
                f"$$ BEGIN RAISE EXCEPTION '{message}'; END $$",
                f"DROP TRIGGER IF EXISTS {table}_append_only ON {table}",
                f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
                f"FOR EACH ROW EXECUTE FUNCTION {table}_refuse()",
            ]
        return []

    @property
    def drop_sqlite(self) -> list[str]:
        return [
            f"DROP TRIGGER IF EXISTS {self.table}_no_update",
            f"DROP TRIGGER IF EXISTS {self.table}_no_delete",
        ]

    def install(self, connection: BaseDatabaseWrapper) -> None:
        with connection.cursor() as cursor:
            for statement in self.sql(connection.vendor):
                cursor.execute(statement)
