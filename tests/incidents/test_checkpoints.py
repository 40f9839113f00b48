"""The log's head anchored outside the database (issue 15): signed checkpoints, made on schedule
and at full time, kept as files, downloaded by the organisations working the match; verify-log
names what the chain alone cannot show: newest entries removed, a chain recomputed after an
edit, an emptied table, a checkpoint altered."""

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from safeground import signing
from safeground.accounts.models import Organisation, Role
from safeground.decisions.models import Decision, RadioSwitch
from safeground.incidents.broadcasting import broadcast_send
from safeground.incidents.chain import entry_hash
from safeground.incidents.checkpoints import (
    Checkpoint,
    checkpoint_due,
    checkpoints_for,
    checkpoints_from_path,
)
from safeground.incidents.models import LogCheckpoint, LogEntry
from safeground.incidents.posts import steward_post_assign
from safeground.incidents.selectors import RECORD_KINDS, visible_log
from safeground.incidents.services import LogEntryError, log_checkpoint_make
from safeground.incidents.verify import chain_verify, log_verify, verify_against
from safeground.live.viewers import viewer_for
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def folder(settings, tmp_path) -> Path:
    """The checkpoint storage in a folder of this test; no checkpoint on schedule unless asked."""
    settings.SAFEGROUND_CHECKPOINT_STORAGE = {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path / "checkpoints")},
    }
    settings.SAFEGROUND_CHECKPOINT_EVERY_ENTRIES = 0
    settings.SAFEGROUND_CHECKPOINT_EVERY_MINUTES = 0
    return tmp_path / "checkpoints"


@pytest.fixture
def signed(match_day, folder, django_capture_on_commit_callbacks):
    """Five reports in the cup tie's log and its head signed at full time, the file written."""
    fixture = match_day.cup_tie
    for n in range(1, 6):
        factories.report(fixture, text=f"Coins thrown, wave {n}")
    with django_capture_on_commit_callbacks(execute=True):
        log_checkpoint_make(fixture=fixture, reason=LogCheckpoint.Reason.FULL_TIME)
    return fixture


def _tamper(*statements: tuple[str, list]) -> None:
    """Change rows behind the application's back, as an attacker with database access would."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            for model in (LogEntry, LogCheckpoint, Decision, RadioSwitch):
                model.triggers().drop(connection)
            for sql, params in statements:
                cursor.execute(sql, params)
            for model in (LogEntry, LogCheckpoint, Decision, RadioSwitch):
                model.triggers().install(connection)
        else:
            cursor.execute("SET session_replication_role = replica")
            for sql, params in statements:
                cursor.execute(sql, params)
            cursor.execute("SET session_replication_role = DEFAULT")


def _verify_log(capsys, **options) -> tuple[bool, str]:
    """(whether verify-log exited 0, what it wrote)."""
    try:
        call_command("verify_log", **options)
    except CommandError as error:
        out = capsys.readouterr()
        return False, out.out + out.err + str(error)
    out = capsys.readouterr()
    return True, out.out + out.err


# --- making checkpoints ---------------------------------------------------------------------------


def test_a_checkpoint_signs_the_head_and_its_file_says_the_same(signed, folder) -> None:
    head = LogEntry.objects.filter(fixture=signed).order_by("-seq").first()
    checkpoint = LogCheckpoint.objects.get(fixture=signed)
    assert (checkpoint.entries, checkpoint.head, checkpoint.reason) == (
        head.seq,
        head.hash,
        "full_time",
    )
    statement = json.loads(checkpoint.statement)
    assert statement["entries"] == LogEntry.objects.filter(fixture=signed).count()
    assert statement["key_id"] == signing.key_id(signing.public_key_raw())
    # Anyone with the public key checks it, without the server.
    public = signing.public_key_raw()
    signature = signing.b64url_decode(checkpoint.signature)
    assert signing.verify(signing.canonical_json(statement), signature, public)
    (file,) = folder.rglob("*.json")
    held = json.loads(file.read_text())
    assert held["statement"] == statement and held["signature"] == checkpoint.signature
    assert held["public_key"] == signing.b64url(public)


def test_checkpoints_are_made_on_schedule_as_the_log_grows(
    match_day, folder, settings, django_capture_on_commit_callbacks
) -> None:
    settings.SAFEGROUND_CHECKPOINT_EVERY_ENTRIES = 3
    fixture = match_day.cup_tie
    with django_capture_on_commit_callbacks(execute=True):
        entries = [factories.report(fixture, text=f"Wave {n}") for n in range(1, 8)]
    signed = list(LogCheckpoint.objects.filter(fixture=fixture).values_list("entries", "head"))
    every_third = [(e.seq, e.hash) for e in entries if e.seq % 3 == 0]
    assert signed == every_third and len(signed) == 2
    assert all(c.reason == "interval" for c in LogCheckpoint.objects.filter(fixture=fixture))
    assert len(list(folder.rglob("*.json"))) == len(every_third)


def test_the_first_entry_of_each_period_is_due_whatever_the_count(settings) -> None:
    settings.SAFEGROUND_CHECKPOINT_EVERY_ENTRIES = 50
    settings.SAFEGROUND_CHECKPOINT_EVERY_MINUTES = 15
    quarter = datetime(2016, 10, 26, 19, 45, tzinfo=UTC)  # a quarter of an hour of the clock
    second = timedelta(seconds=1)
    assert checkpoint_due(seq=7, now=quarter, previous_logged_at=quarter - second)
    later = quarter + timedelta(minutes=15)
    assert not checkpoint_due(seq=7, now=later - second, previous_logged_at=quarter)
    assert checkpoint_due(seq=7, now=later, previous_logged_at=later - second)
    start = quarter
    assert checkpoint_due(seq=50, now=start, previous_logged_at=start)
    assert not checkpoint_due(seq=1, now=start, previous_logged_at=None)


def test_signing_again_without_new_entries_keeps_the_one_signed(signed) -> None:
    again = log_checkpoint_make(fixture=signed)
    assert LogCheckpoint.objects.filter(fixture=signed).count() == 1
    assert again.reason == "full_time"


def test_an_empty_log_has_nothing_to_sign(match_day, folder) -> None:
    with pytest.raises(LogEntryError, match="empty"):
        log_checkpoint_make(fixture=match_day.cup_tie)
    with pytest.raises(CommandError, match="empty"):
        call_command("checkpoint", match=match_day.cup_tie.pk)


def test_the_checkpoint_command_signs_writes_and_prints(match_day, folder, capsys) -> None:
    fixture = match_day.cup_tie
    entry = factories.report(fixture)
    call_command("checkpoint", match=fixture.pk, full_time=True)
    out = capsys.readouterr()
    printed = json.loads(out.out)
    assert printed["statement"]["head"] == entry.hash
    assert printed["statement"]["reason"] == "full_time"
    assert "Full time" in out.err
    (file,) = folder.rglob("*.json")
    assert json.loads(file.read_text())["signature"] == printed["signature"]


# --- the three attacks of issue 15, and a forged checkpoint ---------------------------------------


def test_an_intact_log_verifies_against_its_checkpoints(signed, folder, capsys) -> None:
    ok, said = _verify_log(capsys, match=signed.pk, checkpoints=[folder])
    count = LogEntry.objects.filter(fixture=signed).count()
    assert ok, said
    assert f"{count} entries, chain intact, 1 signed checkpoint(s) agree up to #{count}" in said


def test_removing_the_newest_entries_is_named(signed, capsys) -> None:
    newest = list(LogEntry.objects.filter(fixture=signed).order_by("-seq")[:2])
    _tamper(*[("DELETE FROM incidents_logentry WHERE id = %s", [e.pk]) for e in newest])
    assert chain_verify(signed.pk)[1] is None  # the chain alone still verifies
    ok, said = _verify_log(capsys, match=signed.pk)
    assert not ok
    last = newest[0].seq
    assert f"entries_removed: entries #{last - 1}..#{last} are missing" in said
    assert f"counted {last}, the log has {last - 2}" in said


def test_a_chain_recomputed_after_an_edit_is_named(signed, capsys) -> None:
    chain = list(LogEntry.objects.filter(fixture=signed).order_by("seq"))
    chain[1].text = "Nothing happened"
    statements = []
    prev = chain[0].hash
    for entry in chain[1:]:  # the project's own hash function, every hash after the edit
        entry.prev_hash = prev
        entry.hash = prev = entry_hash(prev, entry)
        statements.append(
            (
                "UPDATE incidents_logentry SET text = %s, prev_hash = %s, hash = %s WHERE id = %s",
                [entry.text, entry.prev_hash, entry.hash, entry.pk],
            )
        )
    _tamper(*statements)
    assert chain_verify(signed.pk)[1] is None  # the chain alone still verifies
    ok, said = _verify_log(capsys, match=signed.pk)
    assert not ok
    assert f"head_mismatch: the chain up to #{chain[-1].seq} is not the one signed" in said


def test_an_emptied_table_is_named_by_the_copies_held_outside(signed, folder, capsys) -> None:
    count = LogEntry.objects.filter(fixture=signed).count()
    # The attacker empties the log and the database's checkpoints too.
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:  # TRUNCATE passes row triggers by design
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the test's deferred FK checks
            cursor.execute("TRUNCATE incidents_logentry, incidents_logcheckpoint CASCADE")
    else:
        _tamper(("DELETE FROM incidents_logentry", []), ("DELETE FROM incidents_logcheckpoint", []))
    assert chain_verify(signed.pk) == (0, None)  # the chain alone: nothing to complain of
    ok, said = _verify_log(capsys)
    assert ok and "does not verify" not in said  # no entries, no checkpoints: nothing to check
    ok, said = _verify_log(capsys, checkpoints=[folder])
    assert not ok
    assert "table_emptied: the log has no entries" in said
    assert f"entries #1..#{count} are missing" in said
    assert "checkpoint_missing" in said  # and the database lost its checkpoint


def test_a_checkpoint_altered_in_a_file_or_the_database_fails_its_signature(
    signed, folder, capsys, tmp_path
) -> None:
    (file,) = folder.rglob("*.json")
    forged = json.loads(file.read_text())
    forged["statement"]["entries"] -= 1  # "the log was shorter": hide the newest entry
    forged_file = tmp_path / "forged.json"
    forged_file.write_text(json.dumps(forged))
    ok, said = _verify_log(capsys, match=signed.pk, checkpoints=[forged_file])
    assert not ok
    assert "bad_signature" in said and str(forged_file) in said
    checkpoint = LogCheckpoint.objects.get(fixture=signed)
    statement = json.loads(checkpoint.statement) | {"head": "0" * 64}
    _tamper(
        (
            "UPDATE incidents_logcheckpoint SET statement = %s WHERE id = %s",
            [signing.canonical_json(statement).decode(), checkpoint.pk],
        )
    )
    ok, said = _verify_log(capsys, match=signed.pk)
    assert not ok and "bad_signature" in said and "(database)" in said


def test_verify_log_exits_0_when_intact_and_1_naming_what_is_missing(
    signed, folder, capsys
) -> None:
    # `safeground` runs the command through Django's run_from_argv: a CommandError is printed
    # and exits with its returncode (1); anything else returns 0.
    call_command("verify_log", match=signed.pk, checkpoints=[folder])
    assert "chain intact" in capsys.readouterr().out
    newest = LogEntry.objects.filter(fixture=signed).order_by("-seq").first()
    _tamper(("DELETE FROM incidents_logentry WHERE id = %s", [newest.pk]))
    with pytest.raises(CommandError) as refused:
        call_command("verify_log", match=signed.pk, checkpoints=[folder])
    assert refused.value.returncode == 1
    assert str(refused.value) == "the log of 1 match(es) does not verify"
    err = capsys.readouterr().err
    assert f"entries_removed: entries #{newest.seq}..#{newest.seq} are missing" in err


def test_a_checkpoint_file_that_is_not_one_is_refused_by_name(signed, tmp_path, capsys) -> None:
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    with pytest.raises(CommandError, match=r"junk\.json: not JSON"):
        call_command("verify_log", checkpoints=[junk])
    with pytest.raises(CommandError, match="no such file or folder"):
        call_command("verify_log", checkpoints=[tmp_path / "missing"])


def test_verify_against_takes_what_checkpoints_for_gives(signed) -> None:
    """What the case bundle will do: the checkpoints as JSON, checked against the entries."""
    bundle = json.loads(json.dumps(checkpoints_for(signed)))
    entries = list(LogEntry.objects.filter(fixture=signed).order_by("seq"))
    check = verify_against(entries, bundle)
    assert check.ok and check.anchored == len(entries)
    assert check.to_json()["problems"] == []
    short = verify_against(entries[:-1], bundle)
    assert [p["code"] for p in short.to_json()["problems"]] == ["entries_removed"]


def test_a_download_of_every_checkpoint_reads_back(signed, tmp_path, no_second_factor) -> None:
    client = factories.logged_in(factories.member_of(signed.ground.organisation, Role.AUDITOR))
    response = client.get(f"/fixtures/{signed.pk}/log/checkpoints.json")
    saved = tmp_path / "copy.json"
    saved.write_bytes(response.content)
    (held,) = checkpoints_from_path(saved)
    assert isinstance(held, Checkpoint)
    assert log_verify(signed.pk, [held]).ok


# --- broadcasts, posts and photo hashes in the chain ----------------------------------------------


def test_posts_and_broadcasts_join_the_chain_but_not_the_log_shown(
    match_day, folder, capsys
) -> None:
    fixture, cast = match_day.cup_tie, match_day.cast
    factories.report(fixture)
    steward_post_assign(
        fixture=fixture, steward=cast["steward"], assigned_by=cast["safety"], zone="away-south-cup"
    )
    broadcast = broadcast_send(fixture=fixture, sent_by=cast["safety"], script="hold")
    records = list(LogEntry.objects.filter(fixture=fixture, kind__in=RECORD_KINDS).order_by("seq"))
    assert [(r.kind, r.assignee_id) for r in records] == [
        ("post", cast["steward"].pk),
        ("broadcast", None),
    ]
    assert records[1].text == broadcast.text
    # The chain covers them, and a signed head anchors them.
    log_checkpoint_make(fixture=fixture)
    ok, said = _verify_log(capsys, match=fixture.pk)
    assert ok, said
    # Nobody sees them as log entries: the control room, the police and the steward alike.
    for username in ("loggist", "police", "steward"):
        viewer = viewer_for(cast[username], fixture)
        shown = [entry.kind for entry, _ in visible_log(fixture, viewer)]
        assert not set(shown) & RECORD_KINDS, username
    loggist = viewer_for(cast["loggist"], fixture)
    assert [e.kind for e, _ in visible_log(fixture, loggist)] == ["report"]


# --- who sees and downloads them ------------------------------------------------------------------


def test_a_force_working_the_match_downloads_its_checkpoints_and_another_does_not(
    signed, match_day, no_second_factor
) -> None:
    police = factories.logged_in(match_day.cast["police"])
    fixture_page = police.get(f"/fixtures/{signed.pk}/").content.decode()
    assert f'href="/fixtures/{signed.pk}/log/checkpoints/" data-checkpoints-link' in fixture_page
    page = police.get(f"/fixtures/{signed.pk}/log/checkpoints/")
    assert page.status_code == 200
    checkpoint = LogCheckpoint.objects.get(fixture=signed)
    assert checkpoint.head in page.content.decode()
    one = police.get(f"/fixtures/{signed.pk}/log/checkpoints/{checkpoint.entries}.json")
    assert one.status_code == 200
    assert "attachment" in one["Content-Disposition"]
    assert one.json()["signature"] == checkpoint.signature
    listed = police.get(f"/api/fixtures/{signed.pk}/log/checkpoints").json()
    assert [c["statement"]["entries"] for c in listed] == [checkpoint.entries]
    other_force = factories.organisation(
        name="Elsewhere Constabulary", kind=Organisation.Kind.POLICE_FORCE
    )
    stranger = factories.logged_in(factories.member(other_force, Role.POLICE_COMMANDER))
    for url in (
        f"/fixtures/{signed.pk}/log/checkpoints/",
        f"/fixtures/{signed.pk}/log/checkpoints.json",
        f"/fixtures/{signed.pk}/log/checkpoints/{checkpoint.entries}.json",
        f"/api/fixtures/{signed.pk}/log/checkpoints",
    ):
        assert stranger.get(url).status_code == 403, url
