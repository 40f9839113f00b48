"""The log's head anchored for every match, however small (issue 25): a replayed match of fewer
than 50 entries got no checkpoint, so its newest entries could be cut, its chain recomputed or
its table emptied and verify-log still passed. The anchoring job signs every head left unsigned
SAFEGROUND_CHECKPOINT_WITHIN_MINUTES, and at full time; verify-log fails a finished match left
unanchored. The job's clock is the `now` it is given: no test sleeps for it."""

import asyncio
import time
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from safeground.demo.replay import replay, scenario_fixture, scenario_load
from safeground.incidents.checkpoints import ANCHOR_TASK, full_time_at
from safeground.incidents.models import LogCheckpoint, LogEntry
from safeground.incidents.tasks import log_heads_anchor
from safeground.incidents.verify import log_verify
from safeground.matches.models import FULL_TIME_MINUTES, Fixture
from tests import factories
from tests.incidents.test_checkpoints import _tamper, _verify_log

MARGIN = 30  # minutes after the scheduled full time (the default)
SCENARIO_LAST = 125  # the seed scenario's last entry, minutes from kick-off


@pytest.fixture
def folder(settings, tmp_path):
    """Checkpoint files in a folder of this test; the defaults of the schedule (no in-append
    rule but every 50th entry), so only the job can anchor a small match."""
    settings.SAFEGROUND_CHECKPOINT_STORAGE = {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path / "checkpoints")},
    }
    settings.SAFEGROUND_CHECKPOINT_EVERY_ENTRIES = 50
    settings.SAFEGROUND_CHECKPOINT_EVERY_MINUTES = 0
    settings.SAFEGROUND_CHECKPOINT_WITHIN_MINUTES = 5
    settings.SAFEGROUND_CHECKPOINT_FULL_TIME_MARGIN_MINUTES = MARGIN
    return tmp_path / "checkpoints"


def _replayed(*, full_time_in: timedelta) -> tuple[Fixture, LogEntry]:
    """The seed match replayed at speed 0 (`safeground replay seed --speed 0`), its kick-off
    set so that its full time (with the margin) comes `full_time_in` from now; its head."""
    scenario = scenario_load("seed")
    fixture = scenario_fixture(scenario)
    kickoff = timezone.now() + full_time_in - timedelta(minutes=FULL_TIME_MINUTES + MARGIN)
    # Every entry of the scenario observed by now: the clock-skew check refuses later ones.
    assert kickoff + timedelta(minutes=SCENARIO_LAST) < timezone.now()
    Fixture.objects.filter(pk=fixture.pk).update(kickoff=kickoff)
    fixture.refresh_from_db()
    replay(scenario, fixture=fixture, speed=0)
    head = LogEntry.objects.filter(fixture=fixture).order_by("-seq").first()
    assert head is not None and head.seq < 50  # below the every-50th rule: the finding's case
    assert not LogCheckpoint.objects.filter(fixture=fixture).exists()
    return fixture, head


def _signed(fixture: Fixture) -> list[tuple[int, str]]:
    return list(
        LogCheckpoint.objects.filter(fixture=fixture)
        .order_by("entries")
        .values_list("entries", "reason")
    )


def test_a_replayed_match_is_anchored_within_the_minutes_allowed(
    demo, folder, django_capture_on_commit_callbacks
) -> None:
    fixture, head = _replayed(full_time_in=timedelta(minutes=9))  # the match is still on
    minute = timedelta(minutes=1)
    signed_at = None
    for n in range(6):  # the job's runs, a minute apart, from the replay's last entry
        with django_capture_on_commit_callbacks(execute=True):
            if log_heads_anchor(now=head.logged_at + n * minute) and signed_at is None:
                signed_at = n
    # Signed one run early (at 4 minutes), so no entry waits more than 5 for its checkpoint.
    assert signed_at == 4
    assert _signed(fixture) == [(head.seq, "interval")]
    assert len(list(folder.rglob("*.json"))) == 1


def test_a_replayed_match_is_anchored_at_full_time_and_after(demo, folder) -> None:
    fixture, head = _replayed(full_time_in=timedelta(minutes=1))
    ends = full_time_at(fixture.kickoff)
    assert log_heads_anchor(now=ends - timedelta(seconds=1)) == []  # not over, not 4 minutes old
    (made,) = log_heads_anchor(now=ends)
    assert (made.entries, made.reason) == (head.seq, "full_time")
    # The debrief written after full time: signed within the minutes allowed, not as full time.
    note = factories.report(fixture, text="Debrief: the away section's stewarding")
    assert log_heads_anchor(now=note.logged_at + timedelta(minutes=3)) == []
    (later,) = log_heads_anchor(now=note.logged_at + timedelta(minutes=4))
    assert (later.entries, later.reason) == (note.seq, "interval")
    # Nothing left to sign: a run costs its one query.
    assert log_heads_anchor(now=note.logged_at + timedelta(hours=1)) == []


def test_full_time_signed_by_hand_is_not_signed_again(match_day, folder) -> None:
    fixture = match_day.cup_tie  # kicked off in 2016: over
    factories.report(fixture)
    call_command("checkpoint", match=fixture.pk, full_time=True)
    assert log_heads_anchor() == []
    assert _signed(fixture) == [(1, "full_time")]


def test_cutting_an_anchored_replay_short_fails_verify_log(demo, folder, capsys) -> None:
    fixture, head = _replayed(full_time_in=timedelta(minutes=9))
    log_heads_anchor(now=head.logged_at + timedelta(minutes=5))
    newest = list(LogEntry.objects.filter(fixture=fixture).order_by("-seq")[:3])
    # Whoever cuts the log removes what rests on those entries too (the replay's last entry is
    # the radio's return, a decision, and its switch).
    decisions = "SELECT id FROM decisions_decision WHERE entry_id = %s"
    _tamper(
        *[
            (f"DELETE FROM decisions_radioswitch WHERE decision_id IN ({decisions})", [e.pk])
            for e in newest
        ],
        *[("DELETE FROM decisions_decision WHERE entry_id = %s", [e.pk]) for e in newest],
        *[("DELETE FROM incidents_logentry WHERE id = %s", [e.pk]) for e in newest],
    )
    ok, said = _verify_log(capsys, match=fixture.pk)
    assert not ok
    assert f"entries_removed: entries #{head.seq - 2}..#{head.seq} are missing" in said


def test_verify_log_fails_a_finished_match_left_unanchored(match_day, folder, capsys) -> None:
    fixture = match_day.cup_tie  # kicked off in 2016: long over
    for n in range(3):
        factories.report(fixture, text=f"Coins thrown, wave {n}")
    ok, said = _verify_log(capsys, match=fixture.pk)
    assert not ok
    assert f"match {fixture.pk} ({fixture}): 3 entries, does not verify" in said
    assert "not_anchored: the match is over" in said
    assert "entries #1..#3 are not anchored: no signed checkpoint at all" in said
    # The job signs it at its next run; then it verifies.
    log_heads_anchor()
    ok, said = _verify_log(capsys, match=fixture.pk)
    assert ok, said


def test_a_match_still_on_is_only_not_anchored_yet(match_day, folder, capsys) -> None:
    fixture = match_day.cup_tie
    Fixture.objects.filter(pk=fixture.pk).update(kickoff=timezone.now() - timedelta(minutes=20))
    factories.report(fixture)
    ok, said = _verify_log(capsys, match=fixture.pk)
    assert ok, said
    assert "1 entries, chain intact; entries #1..#1 not anchored yet" in said


def test_a_finished_match_whose_newest_entries_stayed_unsigned_fails(match_day, folder) -> None:
    fixture = match_day.cup_tie
    factories.report(fixture)
    log_heads_anchor()  # #1 signed at full time
    added = [factories.report(fixture, text=f"Late arrest {n}") for n in (1, 2)]
    soon = added[0].logged_at + timedelta(minutes=2)
    check = log_verify(fixture.pk, now=soon)
    assert check.ok and check.not_yet_anchored.startswith("entries #2..#3 not anchored yet")
    late = added[0].logged_at + timedelta(minutes=5 + 3)  # the minutes allowed and a run missed
    check = log_verify(fixture.pk, now=late)
    assert [p.code for p in check.problems] == ["not_anchored"]
    assert "entries #2..#3 are not anchored: the last checkpoint signed #1" in (
        check.problems[0].message
    )


def test_the_checkpoint_command_writes_one_file(
    match_day, folder, capsys, django_capture_on_commit_callbacks
) -> None:
    fixture = match_day.cup_tie
    factories.report(fixture)
    # As outside a test: the write scheduled on commit runs, then the command's own.
    with django_capture_on_commit_callbacks(execute=True):
        call_command("checkpoint", match=fixture.pk, full_time=True)
    assert [f.name for f in folder.rglob("*.json")] == ["checkpoint-000001.json"]
    with django_capture_on_commit_callbacks(execute=True):
        call_command("checkpoint", match=fixture.pk)  # nothing new: the same file, held already
    assert [f.name for f in folder.rglob("*.json")] == ["checkpoint-000001.json"]
    # A file the storage lost is written again, under its own name.
    (file,) = folder.rglob("*.json")
    body = file.read_bytes()
    file.unlink()
    call_command("checkpoint", match=fixture.pk)
    assert [f.name for f in folder.rglob("*.json")] == ["checkpoint-000001.json"]
    assert file.read_bytes() == body


def test_checkpoint_due_signs_what_the_job_would(match_day, folder, capsys) -> None:
    fixture = match_day.cup_tie
    factories.report(fixture)
    call_command("checkpoint", due=True)
    assert f"match {fixture.pk}: #1 signed (Full time)" in capsys.readouterr().err
    assert _signed(fixture) == [(1, "full_time")]


def test_a_run_with_nothing_due_costs_one_query(
    match_day, folder, django_assert_num_queries
) -> None:
    fixture = match_day.cup_tie
    factories.report(fixture)
    log_heads_anchor()
    with django_assert_num_queries(1):
        assert log_heads_anchor() == []


@pytest.mark.django_db(transaction=True)
def test_the_server_runs_the_job_in_its_own_thread(settings, folder) -> None:
    # What `make run` serves: the ASGI application's start-up starts the job, its shut-down
    # stops it. Run every 50 ms here rather than every minute.
    settings.SAFEGROUND_PERIODIC_TASKS_IN_SERVER = True
    settings.SAFEGROUND_PERIODIC_TASKS = {ANCHOR_TASK: 0.05}
    fixture = factories.match_day().cup_tie  # over
    factories.report(fixture)

    def signed() -> bool:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if LogCheckpoint.objects.filter(fixture=fixture).exists():
                return True
            time.sleep(0.05)
        return False

    async def serve() -> bool:
        from safeground.asgi import lifespan

        inbox: asyncio.Queue = asyncio.Queue()
        sent: list[str] = []

        async def send(message) -> None:
            sent.append(message["type"])

        await inbox.put({"type": "lifespan.startup"})
        running = asyncio.create_task(lifespan(inbox.get, send))
        found = await asyncio.to_thread(signed)
        await inbox.put({"type": "lifespan.shutdown"})
        await running
        assert sent == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
        return found

    assert asyncio.run(serve())
    assert _signed(fixture) == [(1, "full_time")]
