"""Append-only records: the one mechanism for every audit table (the control-room log, scans,
entry conflicts, ban steps, access records, and those to come).

A record that must never change subclasses `AppendOnlyModel`: Python refuses to save it twice or
to delete it, and its queryset refuses `update()` and `delete()`. The database refuses too, so a
shell, a raw statement or another program cannot rewrite history: a migration installs the
table's triggers with `AppendOnlyTriggers(table, erasable=...)`, and a test checks that every
`AppendOnlyModel` has them. The only change ever allowed is retention erasing personal data
from the columns a model names in `erasable` (`erase()`); every other column stays as written.
"""

import functools
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar, NoReturn, Self

from django.apps import apps
from django.db import connection, models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.operations.base import Operation
from django.db.migrations.state import ProjectState

from safeground.prepared import prepared_cursor


class AppendOnlyError(Exception):
    """An append-only record was about to be changed or deleted: write a new record instead."""


class ErasableQuerySet[M: models.Model](models.QuerySet[M]):
    """`erase()`: retention's one write, limited to the columns the model names `erasable`. An
    ordinary model with a file retention deletes (the log's photos) has it too."""

    def erase(self, **fields: Any) -> int:
        """Retention only: overwrite personal data in the model's `erasable` columns."""
        allowed = getattr(self.model, "erasable", ())
        refused = sorted(set(fields) - set(allowed))
        if refused:
            raise AppendOnlyError(f"{', '.join(refused)}: not erasable on {self.model.__name__}")
        return models.QuerySet.update(self, **fields)


class AppendOnlyQuerySet[M: models.Model](ErasableQuerySet[M]):
    def update(self, **kwargs: Any) -> NoReturn:
        raise AppendOnlyError(f"{self.model._meta.verbose_name_plural} are append-only")

    def delete(self) -> NoReturn:
        raise AppendOnlyError(f"{self.model._meta.verbose_name_plural} are never deleted")


class AppendOnlyModel(models.Model):
    """A record written once and never changed or deleted (the database enforces it too)."""

    erasable: ClassVar[tuple[str, ...]] = ()  # columns retention may overwrite, nothing else

    objects: ClassVar[Any] = AppendOnlyQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AppendOnlyError(
                f"{self._meta.verbose_name_plural} are append-only: write a new one instead"
            )
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise AppendOnlyError(f"{self._meta.verbose_name_plural} are never deleted")

    def insert(self) -> None:
        """Write this new record in one INSERT compiled once per model: `save()` for a hot path
        (the log's append), without the ORM's save machinery, whose compiling cost more than the
        round trip. No signal is sent: nothing listens to an append-only model's."""
        if not self._state.adding:
            raise AppendOnlyError(
                f"{self._meta.verbose_name_plural} are append-only: write a new one instead"
            )
        fields, sql = _insert_statement(type(self), connection.vendor)
        values = [
            field.get_db_prep_save(field.pre_save(self, True), connection) for field in fields
        ]
        with _insert_cursor() as cursor:
            cursor.execute(sql, values)
            self.pk = cursor.fetchone()[0]
        self._state.adding = False
        self._state.db = connection.alias

    @classmethod
    def triggers(cls) -> "AppendOnlyTriggers":
        return AppendOnlyTriggers(cls._meta.db_table, erasable=cls.erasable)


def _insert_cursor() -> Any:
    """On PostgreSQL the INSERT is prepared once per connection, its values dumped natively, not
    quoted in Python (ADR 0013, Update 2); elsewhere Django's cursor."""
    return prepared_cursor() if connection.vendor == "postgresql" else connection.cursor()


@functools.cache
def _insert_statement(model: type[models.Model], vendor: str) -> tuple[list[Any], str]:
    """The model's columns (all but its generated key) and its INSERT ... RETURNING the key."""
    fields = [field for field in model._meta.concrete_fields if not field.primary_key]
    quote = connection.ops.quote_name
    columns = ", ".join(quote(str(field.column)) for field in fields)
    marks = ", ".join(["%s"] * len(fields))
    key = quote(str(model._meta.pk.column))
    return (
        fields,
        f"INSERT INTO {quote(model._meta.db_table)} ({columns}) VALUES ({marks}) RETURNING {key}",
    )


def append_only_models() -> Iterator[type[AppendOnlyModel]]:
    for model in apps.get_models():
        if issubclass(model, AppendOnlyModel):
            yield model


class AppendOnlyTriggers(Operation):
    """A migration operation: the database refuses UPDATE and DELETE on `table`, except an UPDATE
    that changes only the `erasable` columns (retention). Reversible."""

    reduces_to_sql = True
    reversible = True

    def __init__(self, table: str, erasable: Iterable[str] = ()) -> None:
        self.table = table
        self.erasable = tuple(erasable)

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        kwargs = {"erasable": self.erasable} if self.erasable else {}
        return self.__class__.__name__, [self.table], kwargs

    def describe(self) -> str:
        return f"Append-only triggers on {self.table}"

    def state_forwards(self, app_label: str, state: ProjectState) -> None:
        pass  # the schema's state is unchanged: triggers only

    def database_forwards(
        self, app_label: str, schema_editor: BaseDatabaseSchemaEditor, *args: Any
    ) -> None:
        self.install(schema_editor.connection)

    def database_backwards(
        self, app_label: str, schema_editor: BaseDatabaseSchemaEditor, *args: Any
    ) -> None:
        self.drop(schema_editor.connection)

    @property
    def message(self) -> str:
        return f"{self.table} is append-only"

    def _changed(self, connection: BaseDatabaseWrapper) -> str:
        """SQLite: a condition true when any column outside `erasable` changes value."""
        with connection.cursor() as cursor:
            columns = [
                c.name for c in connection.introspection.get_table_description(cursor, self.table)
            ]
        kept = [connection.ops.quote_name(c) for c in columns if c not in self.erasable]
        return " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in kept)

    def sql(self, connection: BaseDatabaseWrapper) -> list[str]:
        table, message = self.table, self.message
        if connection.vendor == "sqlite":
            return [
                *self.drop_sql(connection),
                f"CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table} "
                f"WHEN {self._changed(connection)} BEGIN SELECT RAISE(ABORT, '{message}'); END",
                f"CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table} "
                f"BEGIN SELECT RAISE(ABORT, '{message}'); END",
            ]
        if connection.vendor == "postgresql":
            erasable = ", ".join(f"'{c}'" for c in self.erasable)
            keep = f" - ARRAY[{erasable}]::text[]" if erasable else ""
            return [
                f"CREATE OR REPLACE FUNCTION {table}_refuse() RETURNS trigger LANGUAGE plpgsql AS "
                f"$$ BEGIN IF TG_OP = 'UPDATE' AND (to_jsonb(NEW){keep}) = (to_jsonb(OLD){keep}) "
                f"THEN RETURN NEW; END IF; RAISE EXCEPTION '{message}'; END $$",
                f"DROP TRIGGER IF EXISTS {table}_append_only ON {table}",
                f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
                f"FOR EACH ROW EXECUTE FUNCTION {table}_refuse()",
            ]
        return []

    def drop_sql(self, connection: BaseDatabaseWrapper) -> list[str]:
        table = self.table
        if connection.vendor == "sqlite":
            return [
                f"DROP TRIGGER IF EXISTS {table}_no_update",
                f"DROP TRIGGER IF EXISTS {table}_no_delete",
            ]
        if connection.vendor == "postgresql":
            return [
                f"DROP TRIGGER IF EXISTS {table}_append_only ON {table}",
                f"DROP FUNCTION IF EXISTS {table}_refuse()",
            ]
        return []

    def install(self, connection: BaseDatabaseWrapper) -> None:
        with connection.cursor() as cursor:
            for statement in self.sql(connection):
                cursor.execute(statement)

    def drop(self, connection: BaseDatabaseWrapper) -> None:
        with connection.cursor() as cursor:
            for statement in self.drop_sql(connection):
                cursor.execute(statement)

    def installed(self, connection: BaseDatabaseWrapper) -> bool:
        """Whether the database has this table's triggers (a test checks every model's)."""
        with connection.cursor() as cursor:
            if connection.vendor == "sqlite":
                cursor.execute(
                    "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = %s "
                    "AND name IN (%s, %s)",
                    [self.table, f"{self.table}_no_update", f"{self.table}_no_delete"],
                )
                return bool(cursor.fetchone()[0] == 2)
            cursor.execute(
                "SELECT count(*) FROM pg_trigger WHERE tgname = %s AND NOT tgisinternal",
                [f"{self.table}_append_only"],
            )
            return bool(cursor.fetchone()[0] == 1)

    @classmethod
    def every(cls) -> list[Self]:
        return [cls(m._meta.db_table, erasable=m.erasable) for m in append_only_models()]


class KeptByTriggers(Operation):
    """A migration operation for counts the database keeps by triggers (ADR 0022): forwards,
    `install` puts the triggers in and fills the counts from the rows already stored; backwards,
    the statements of `drop_sql` take the triggers out. Each app names its own three."""

    reduces_to_sql = False
    reversible = True
    description = ""

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        return self.__class__.__name__, [], {}

    def describe(self) -> str:
        return self.description

    def state_forwards(self, app_label: str, state: ProjectState) -> None:
        pass  # triggers and rows only

    def database_forwards(
        self, app_label: str, schema_editor: BaseDatabaseSchemaEditor, *args: Any
    ) -> None:
        self.install(schema_editor.connection)

    def database_backwards(
        self, app_label: str, schema_editor: BaseDatabaseSchemaEditor, *args: Any
    ) -> None:
        with schema_editor.connection.cursor() as cursor:
            for sql in self.drop_sql(schema_editor.connection.vendor):
                cursor.execute(sql)

    def install(self, db: BaseDatabaseWrapper) -> None:
        raise NotImplementedError

    def drop_sql(self, vendor: str) -> list[str]:
        raise NotImplementedError
