"""Append-only in the database itself: triggers refuse UPDATE and DELETE of entry conflicts."""

from django.db.backends.base.base import BaseDatabaseWrapper

from safeground.append_only import AppendOnlyTable

CONFLICTS = AppendOnlyTable("entry_entryconflict", "entry conflicts are append-only")
DROP_SQLITE = CONFLICTS.drop_sqlite


def install_append_only_triggers(connection: BaseDatabaseWrapper) -> None:
    CONFLICTS.install(connection)  # called by migration 0003
