"""Append-only in the database itself: triggers refuse UPDATE and DELETE of log entries."""

from django.db.backends.base.base import BaseDatabaseWrapper

from safeground.append_only import AppendOnlyTable

LOG = AppendOnlyTable("incidents_logentry", "log entries are append-only")
DROP_SQLITE = LOG.drop_sqlite


def install_append_only_triggers(connection: BaseDatabaseWrapper) -> None:
    LOG.install(connection)  # called by migration 0002
