"""A log entry, once written, is never changed or deleted, by any path; tampering is found."""

import itertools

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction
from django.test import Client

from safeground.accounts.models import User
from safeground.append_only import AppendOnlyError
from safeground.incidents.models import LogEntry
from safeground.incidents.services import Place, log_entry_append
from safeground.incidents.tasks import log_heads_anchor

pytestmark = pytest.mark.django_db


@pytest.fixture
def entries(match_day):
    author = match_day.cast["loggist"]
    return [
        log_entry_append(
            fixture=match_day.cup_tie,
            author=author,
            category="missile",
            text=f"Coins thrown, wave {n}",
            place=Place(block="S-L1"),
        )
        for n in range(1, 4)
    ]


def test_the_orm_refuses_updates_and_deletes(entries) -> None:
    entry = entries[0]
    entry.text = "rewritten"
    with pytest.raises(AppendOnlyError):
        entry.save()
    with pytest.raises(AppendOnlyError):
        entry.delete()
    with pytest.raises(AppendOnlyError):
        entry.insert()  # the hot path's write refuses a stored entry too
    with pytest.raises(AppendOnlyError):
        LogEntry.objects.filter(pk=entry.pk).update(text="rewritten")
    with pytest.raises(AppendOnlyError):
        LogEntry.objects.filter(pk=entry.pk).delete()
    assert LogEntry.objects.get(pk=entry.pk).text == "Coins thrown, wave 1"


def test_the_hot_paths_insert_stores_every_field_as_read_back(entries) -> None:
    stored = LogEntry.objects.get(pk=entries[0].pk)  # written by AppendOnlyModel.insert
    for field in LogEntry._meta.concrete_fields:
        assert getattr(stored, field.attname) == getattr(entries[0], field.attname), field.name
    assert entries[0]._state.adding is False and entries[0]._state.db == "default"


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE incidents_logentry SET text = 'rewritten' WHERE id = %s",
        "DELETE FROM incidents_logentry WHERE id = %s",
    ],
)
def test_the_database_refuses_raw_sql(entries, statement) -> None:
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(statement, [entries[0].pk])
    assert LogEntry.objects.filter(text="Coins thrown, wave 1").count() == 1


def test_the_admin_shows_entries_but_cannot_change_them(entries) -> None:
    admin = User.objects.create_superuser("root-admin", "a@example.org", "long-enough-pw")
    client = Client()
    client.force_login(admin)
    url = f"/admin/incidents/logentry/{entries[0].pk}/change/"
    page = client.get(url)
    assert page.status_code == 200
    assert 'name="text"' not in page.content.decode()  # read-only: no form fields
    assert client.post(url, {"text": "rewritten"}).status_code == 403
    delete = f"/admin/incidents/logentry/{entries[0].pk}/delete/"
    assert client.post(delete, {"post": "yes"}).status_code == 403
    assert LogEntry.objects.get(pk=entries[0].pk).text == "Coins thrown, wave 1"


def test_the_api_has_no_way_to_change_an_entry(entries, client_for, no_second_factor) -> None:
    client = client_for("loggist")
    url = f"/api/fixtures/{entries[0].fixture_id}/log/{entries[0].pk}"
    for method in (client.put, client.patch, client.delete):
        assert method(url, {"text": "x"}, content_type="application/json").status_code in {404, 405}


def test_each_entry_points_at_the_one_before(entries) -> None:
    chain = list(LogEntry.objects.filter(fixture=entries[0].fixture).order_by("seq"))
    assert [e.seq for e in chain] == [1, 2, 3]
    assert chain[0].prev_hash == "0" * 64
    assert all(b.prev_hash == a.hash for a, b in itertools.pairwise(chain))
    assert len({e.hash for e in chain}) == 3


def test_verify_log_passes_an_intact_chain(entries, capsys) -> None:
    # The match is over: its log is anchored, as the anchoring job does after full time.
    log_heads_anchor()
    call_command("verify_log", match=entries[0].fixture_id)
    assert "3 entries, chain intact" in capsys.readouterr().out


def _tamper(sql: str, params: list) -> None:
    """Change a row behind the application's back, as an attacker with database access would."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            LogEntry.triggers().drop(connection)
            cursor.execute(sql, params)
            LogEntry.triggers().install(connection)
        else:
            # A superuser can switch user triggers off for the session; the chain still tells.
            cursor.execute("SET session_replication_role = replica")
            cursor.execute(sql, params)
            cursor.execute("SET session_replication_role = DEFAULT")


def test_verify_log_names_an_entry_altered_in_the_database(entries, capsys) -> None:
    _tamper("UPDATE incidents_logentry SET text = %s WHERE id = %s", ["Nothing", entries[1].pk])
    with pytest.raises(CommandError, match="does not verify"):
        call_command("verify_log", match=entries[0].fixture_id)
    err = capsys.readouterr().err
    assert f"entry #2 (id {entries[1].pk}) its content no longer matches its hash" in err


def test_verify_log_names_a_deleted_entry(entries, capsys) -> None:
    _tamper("DELETE FROM incidents_logentry WHERE id = %s", [entries[1].pk])
    with pytest.raises(CommandError):
        call_command("verify_log")
    assert "entry #3" in capsys.readouterr().err


def test_verify_log_refuses_an_unknown_match(db) -> None:
    with pytest.raises(CommandError, match="no match with id 999999"):
        call_command("verify_log", match=999999)
