"""Retention of the evidence locker's files (ADR 0011): a closed case's files go a set number of
days after it closed, unless a ban proposed from the case has not ended; a file on a log entry
only goes with the log's photos; an open case holds its files. The file goes, the row with its
SHA-256 and its chain of custody stays, and the custody records the destruction."""

import io
import json
import zipfile
from datetime import date, timedelta
from io import StringIO

import pytest
from django.core.files.storage import storages
from django.core.management import call_command
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.urls import reverse
from django.utils import timezone

from safeground.bans.services import ban_appeal, ban_appeal_decide, ban_approve
from safeground.casework.bundle import bundle_verify
from safeground.casework.evidence import evidence_add
from safeground.casework.models import Case, CustodyRecord, Evidence
from safeground.casework.services import (
    case_ban_propose,
    case_bundle_export,
    case_close,
    subject_add,
)
from safeground.incidents.services import Place
from safeground.privacy.services import register_daily
from tests import factories

pytestmark = pytest.mark.django_db
DAYS = 2192  # six years: the limitation period for a civil claim
PHOTO_DAYS = 183


@pytest.fixture
def periods(settings):
    settings.SAFEGROUND_EVIDENCE_RETENTION_DAYS = DAYS
    settings.SAFEGROUND_PHOTO_RETENTION_DAYS = PHOTO_DAYS
    settings.SAFEGROUND_TICKET_RETENTION_DAYS = PHOTO_DAYS


def _close(case: Case) -> date:
    """Close the case; the first day on which it closed more than DAYS days ago."""
    case_close(case=case, by=case.opened_by, reason="No further action by the police.")
    closed = case.events.get(action="closed").at
    return timezone.localdate(closed) + timedelta(days=DAYS + 1)


def _step(today: date):
    _, report = register_daily(today=today)
    [step] = [s for s in report.steps if s.what == "evidence files"]
    return step


def _counts(today: date) -> tuple[int, int]:
    step = _step(today)
    return step.erased, step.held


def _stored(evidence: Evidence) -> bool:
    return storages["evidence"].exists(evidence.file.name)


def test_a_closed_cases_file_is_kept_for_the_period_then_erased_keeping_hash_and_custody(
    match_day, periods
) -> None:
    case = factories.case(match_day.cup_tie)
    still = factories.evidence(case, description="CCTV still, camera 12")
    cctv = factories.evidence(case, kind="cctv")
    name, sha256 = still.file.name, still.sha256
    due = _close(case)
    # The day before: nothing goes.
    step = _step(due - timedelta(days=1))
    assert (step.erased, step.held, step.days) == (0, 0, DAYS)
    assert _stored(Evidence.objects.get(pk=still.pk))

    out = StringIO()
    call_command("apply_retention", today=due.isoformat(), stdout=out)
    assert (
        f"Retention ({DAYS} days after the case closed; a log entry's only, {PHOTO_DAYS} after "
        "the match): 1 evidence files erased, 0 held by an open case or a ban not ended."
    ) in out.getvalue()
    still = Evidence.objects.get(pk=still.pk)
    assert not storages["evidence"].exists(name)
    assert not still.file and still.erased_at is not None
    assert (still.sha256, still.description, still.case_id) == (
        sha256,
        "CCTV still, camera 12",
        case.pk,
    )
    custody = list(CustodyRecord.objects.filter(evidence=still).order_by("pk"))
    assert [c.action for c in custody] == ["upload", "destroy"]
    destroyed = custody[-1]
    assert (destroyed.user, destroyed.username, destroyed.sha256, destroyed.case_id) == (
        None,
        "scheduled task",
        sha256,
        case.pk,
    )
    assert f"case #{case.pk} closed more than {DAYS} days ago" in destroyed.detail
    # A CCTV reference has no file: nothing to erase, and it is not counted.
    assert Evidence.objects.get(pk=cctv.pk).erased_at is None
    # Run again: nothing more.
    assert _step(due).erased == 0


def test_an_open_cases_files_are_held_and_counted_until_it_closes(match_day, periods) -> None:
    case = factories.case(match_day.cup_tie)
    evidence = factories.evidence(case)
    far = date(2099, 1, 1)  # long past any period, the match's included
    step = _step(far)
    assert (step.erased, step.held) == (0, 1)
    evidence = Evidence.objects.get(pk=evidence.pk)
    assert evidence.erased_at is None and _stored(evidence)
    case_close(case=case, by=case.opened_by, reason="Closed.")
    step = _step(far)
    assert (step.erased, step.held) == (1, 0)
    assert Evidence.objects.get(pk=evidence.pk).erased_at is not None


def test_a_closed_cases_files_stay_while_a_ban_from_it_has_not_ended(match_day, periods) -> None:
    cup, cast = match_day.cup_tie, match_day.cast
    entry = factories.report(cup, place=Place(block="S-L2", first_row="D"))
    ticket = factories.ticket(cup, block="S-L2", row="D", seat="7", holder_name="Casey Quellmoor",
                              holder_dob=date(1991, 4, 2))  # fmt: skip
    case = factories.case(cup, entries=[entry])
    subject = subject_add(case=case, by=cast["banofficer"], kind="ticket_holder", ticket=ticket)
    evidence = factories.evidence(case)
    ban = case_ban_propose(case=case, subject=subject, by=cast["banofficer"], is_life=True,
                           starts_on=date(2024, 1, 1), grounds="Threw coins.").ban  # fmt: skip
    due = _close(case)
    # Proposed (awaiting approval), in force, under appeal: the file is what the ban stands on.
    assert _counts(due) == (0, 1)
    ban = ban_approve(ban=ban, by=cast["safety"], reason="CCTV reviewed", today=due)
    assert _counts(due) == (0, 1)
    ban = ban_appeal(ban=ban, by=cast["banofficer"], reason="Letter from the supporter")
    assert _counts(due) == (0, 1)
    assert Evidence.objects.get(pk=evidence.pk).erased_at is None
    # Revoked on appeal: the ban has ended, and the case closed long ago.
    ban_appeal_decide(ban=ban, by=cast["security"], outcome="revoked", reason="Heard")
    assert _counts(due) == (1, 0)
    assert Evidence.objects.get(pk=evidence.pk).erased_at is not None


def test_a_file_on_a_log_entry_only_follows_the_photos_period_unless_an_open_case_holds_it(
    match_day, periods
) -> None:
    cup, safety = match_day.cup_tie, match_day.cast["safety"]
    loose_entry, held_entry = factories.report(cup), factories.report(cup)
    loose, held = (
        evidence_add(by=safety, fixture=cup, entry=e, kind="screenshot",
                     upload=factories.upload("post.png", factories.PNG + bytes([n])))
        for n, e in enumerate((loose_entry, held_entry))
    )  # fmt: skip
    factories.case(cup, entries=[held_entry])  # open, on the entry: the file is held
    due = cup.kickoff.date() + timedelta(days=PHOTO_DAYS + 1)
    assert _counts(due - timedelta(days=1)) == (0, 0)
    step = _step(due)
    assert (step.erased, step.held, step.days) == (1, 1, DAYS)
    loose, held = Evidence.objects.get(pk=loose.pk), Evidence.objects.get(pk=held.pk)
    assert loose.erased_at is not None and not loose.file and len(loose.sha256) == 64
    assert held.erased_at is None and _stored(held)
    destroyed = CustodyRecord.objects.get(evidence=loose, action="destroy")
    assert destroyed.case is None and f"{PHOTO_DAYS} days ago, no case" in destroyed.detail


def test_a_file_on_a_log_entry_in_a_closed_case_stays_for_the_cases_period(
    match_day, periods
) -> None:
    """A closed case still stands on the files of its log entries (a ban may rest on them):
    they follow the case's period, not the photos'."""
    cup, safety = match_day.cup_tie, match_day.cast["safety"]
    entry = factories.report(cup)
    upload = factories.upload("post.png", factories.PNG + b"entry")
    on_entry = evidence_add(by=safety, fixture=cup, entry=entry, kind="screenshot", upload=upload)
    case = factories.case(cup, entries=[entry])
    due = _close(case)
    photos_due = cup.kickoff.date() + timedelta(days=PHOTO_DAYS + 1)
    assert photos_due < due
    assert _counts(photos_due) == (0, 1)  # the case closed within its period: kept
    assert _stored(Evidence.objects.get(pk=on_entry.pk))
    assert _counts(due) == (1, 0)
    assert Evidence.objects.get(pk=on_entry.pk).erased_at is not None


def test_an_erased_file_answers_410_naming_the_erasure_and_the_hash(
    match_day, periods, client_for, no_second_factor
) -> None:
    case = factories.case(match_day.cup_tie)
    evidence = factories.evidence(case)
    _step(_close(case))
    police = client_for("police")
    for query in ("", "?download=1"):
        response = police.get(reverse("evidence_file", args=[evidence.pk]) + query)
        assert response.status_code == 410
        text = response.content.decode()
        assert "erased by retention" in text and evidence.sha256 in text
    # Nothing was viewed: no custody record of a view or a download.
    assert set(
        CustodyRecord.objects.filter(evidence=evidence).values_list("action", flat=True)
    ) == {
        "upload",
        "destroy",
    }
    page = client_for("safety").get(reverse("case", args=[case.pk]))
    assert "file erased by retention" in page.content.decode()


def test_a_bundle_lists_an_erased_file_with_erased_at_and_no_file(match_day, periods) -> None:
    case = factories.case(match_day.cup_tie)
    erased = factories.evidence(case)
    due = _close(case)
    _step(due)
    data = case_bundle_export(case=case, by=match_day.cast["police"]).read()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        manifest = json.loads(zf.read("manifest.json"))
        assert not [n for n in zf.namelist() if n.startswith("evidence/")]
    [item] = [i for i in manifest["evidence"] if i.get("id") == erased.pk]
    assert "file" not in item and item["erased_at"] and item["sha256_at_upload"] == erased.sha256
    assert "camera" not in item


def test_a_bundle_with_an_erased_file_still_verifies(match_day, periods, tmp_path) -> None:
    case = factories.case(match_day.cup_tie)
    factories.evidence(case)
    _step(_close(case))
    path = tmp_path / "case.zip"
    path.write_bytes(case_bundle_export(case=case, by=match_day.cast["police"]).read())
    assert bundle_verify(path).ok


def test_the_database_still_refuses_any_other_change_to_evidence(match_day) -> None:
    case = factories.case(match_day.cup_tie)
    evidence = factories.evidence(case)
    table = Evidence._meta.db_table
    for change in ("description = 'rewritten'", "sha256 = 'x'", "uploaded_at = CURRENT_TIMESTAMP"):
        with (
            pytest.raises(DatabaseError, match="append-only"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(f"UPDATE {table} SET {change} WHERE id = %s", [evidence.pk])
    # A file blanked without the erasure's mark breaks the row's constraint.
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET file = '' WHERE id = %s", [evidence.pk])
    with connection.cursor() as cursor:  # retention's erasure alone is allowed
        cursor.execute(
            f"UPDATE {table} SET file = '', erased_at = CURRENT_TIMESTAMP WHERE id = %s",
            [evidence.pk],
        )
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(f"DELETE FROM {table} WHERE id = %s", [evidence.pk])


def test_an_erased_log_photo_in_the_locker_answers_410_not_a_500(
    match_day, periods, client_for, no_second_factor
) -> None:
    from safeground.incidents.photos import log_entry_photo_add

    cup = match_day.cup_tie
    entry = factories.report(cup)
    photo = log_entry_photo_add(entry=entry, author=match_day.cast["steward"],
                                upload=factories.upload("phone.png"))  # fmt: skip
    register_daily(today=cup.kickoff.date() + timedelta(days=PHOTO_DAYS + 1))
    response = client_for("safety").get(reverse("evidence_photo", args=[photo.pk]))
    assert response.status_code == 410
    assert "erased by retention" in response.content.decode()
    assert photo.sha256 in response.content.decode()
