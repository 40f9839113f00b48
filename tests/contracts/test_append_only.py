"""One append-only mechanism: every audit model refuses change in Python and in the database, and
retention may erase only the columns a model names."""

import re
from pathlib import Path

import pytest
from django.db import DatabaseError, connection, transaction

from safeground.append_only import AppendOnlyError, AppendOnlyTriggers, append_only_models
from safeground.bans.models import AccessRecord, BanStep
from safeground.entry.models import EntryConflict, Scan
from safeground.incidents.models import LogEntry
from tests import factories

pytestmark = pytest.mark.django_db


def test_every_audit_table_is_append_only() -> None:
    assert {LogEntry, Scan, EntryConflict, BanStep, AccessRecord} <= set(append_only_models())


def test_the_design_doc_lists_every_append_only_model() -> None:
    """docs/design.md's list once said 14 where the code had 18."""
    design = (Path(__file__).parents[2] / "docs" / "design.md").read_text()
    section = design.split("## One append-only mechanism", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"`([A-Z]\w+)`", section.split("Today", 1)[1].split(";", 1)[0]))
    models = {model.__name__ for model in append_only_models()}
    assert listed == models


@pytest.mark.parametrize("model", list(append_only_models()), ids=lambda m: m.__name__)
def test_every_append_only_model_has_its_triggers_in_the_database(model) -> None:
    """A new AppendOnlyModel without an AppendOnlyTriggers migration fails here."""
    assert model.triggers().installed(connection), f"no triggers on {model._meta.db_table}"


def _row_count(table: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {table}")
        return int(cursor.fetchone()[0])


def _access_record() -> AccessRecord:
    from django.utils import timezone

    return AccessRecord.objects.create(
        at=timezone.now(), username="auditor-test", action=AccessRecord.Action.SEARCH, reason="x"
    )


def test_python_refuses_to_change_or_delete() -> None:
    record = _access_record()
    record.reason = "rewritten"
    with pytest.raises(AppendOnlyError):
        record.save()
    with pytest.raises(AppendOnlyError):
        record.delete()
    with pytest.raises(AppendOnlyError):
        AccessRecord.objects.filter(pk=record.pk).update(reason="rewritten")
    with pytest.raises(AppendOnlyError):
        AccessRecord.objects.filter(pk=record.pk).delete()
    with pytest.raises(AppendOnlyError, match="reason: not erasable"):
        AccessRecord.objects.filter(pk=record.pk).erase(reason="")
    assert AccessRecord.objects.get(pk=record.pk).reason == "x"


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE bans_accessrecord SET reason = 'rewritten' WHERE id = %s",
        "UPDATE bans_accessrecord SET username = 'someone else' WHERE id = %s",
        "DELETE FROM bans_accessrecord WHERE id = %s",
    ],
)
def test_the_database_refuses_raw_changes(statement) -> None:
    record = _access_record()
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(statement, [record.pk])
    assert AccessRecord.objects.get(pk=record.pk).reason == "x"


def test_the_database_lets_retention_erase_only_the_erasable_columns() -> None:
    step = BanStep.objects.get(ban=factories.ban(status="proposed"))
    with connection.cursor() as cursor:
        cursor.execute("UPDATE bans_banstep SET reason = '(erased)' WHERE id = %s", [step.pk])
    assert BanStep.objects.get(pk=step.pk).reason == "(erased)"
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(
            "UPDATE bans_banstep SET reason = '', action = 'rewritten' WHERE id = %s", [step.pk]
        )
    assert BanStep.objects.get(pk=step.pk).action != "rewritten"


def test_a_bulk_delete_is_refused_whole() -> None:
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(
            "INSERT INTO bans_accessrecord (at, username, action, reason, detail) "
            "VALUES (CURRENT_TIMESTAMP, 'u', 'search', 'r', '')"
        )
        cursor.execute("DELETE FROM bans_accessrecord")
    assert _row_count("bans_accessrecord") == 0


def test_the_operation_reverses() -> None:
    triggers = AppendOnlyTriggers("bans_accessrecord")
    triggers.drop(connection)
    assert not triggers.installed(connection)
    triggers.install(connection)
    assert triggers.installed(connection)
