"""Retention of personal data beyond the register: ticket holders' names and dates of birth, the
log's photos and the check photos, each erased a set number of days after the match, except what
an open case names (a legal hold); `safeground apply-retention` names every count."""

from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction

from safeground.casework.services import case_close, subject_add
from safeground.deployment.models import CheckResult
from safeground.deployment.services import check_record
from safeground.entry.models import Scan, Ticket
from safeground.incidents.models import LogEntry, Photo
from safeground.incidents.photos import log_entry_photo_add
from safeground.incidents.verify import log_verify
from safeground.privacy.services import register_daily
from tests import factories

pytestmark = pytest.mark.django_db
DAYS = 183


@pytest.fixture
def periods(settings):
    settings.SAFEGROUND_TICKET_RETENTION_DAYS = DAYS
    settings.SAFEGROUND_PHOTO_RETENTION_DAYS = DAYS


def due_day(fixture) -> object:
    """The first day on which the match is more than DAYS days ago."""
    return fixture.kickoff.date() + timedelta(days=DAYS + 1)


def test_ticket_holders_are_blanked_after_the_period_and_the_tickets_and_scans_stay(
    match_day, periods
) -> None:
    cup = match_day.cup_tie
    kept_whole = factories.ticket(match_day.league_match, holder_name="Ellis Orbenshaw")
    ticket = factories.ticket(cup, holder_name="Rowan Quellmoor", block="N-L2")
    factories.tickets(cup, 30, prefix="CUP")
    factories.device(match_day.cast.home)
    factories.scan(cup, ticket.barcode, turnstile="A01")
    scan = Scan.objects.get(ticket=ticket)
    # The day before it is due: nothing of the cup tie goes (the league match is a week older).
    _, report = register_daily(today=due_day(cup) - timedelta(days=1))
    ticket.refresh_from_db()
    assert ticket.holder_name == "Rowan Quellmoor"
    [tickets_step] = [s for s in report.steps if s.what == "ticket holders"]
    assert tickets_step.erased == 1  # the league match's one ticket, a week older

    _, report = register_daily(today=due_day(cup))
    [tickets_step] = [s for s in report.steps if s.what == "ticket holders"]
    assert (tickets_step.erased, tickets_step.held, tickets_step.days) == (31, 0, DAYS)
    ticket.refresh_from_db()
    assert (ticket.holder_name, ticket.holder_dob) == ("", None)
    assert ticket.holder_erased_at is not None
    assert ticket.barcode and ticket.block is not None  # the seat is not personal data
    assert Scan.objects.get(pk=scan.pk).ticket_id == ticket.pk
    assert not Ticket.objects.filter(fixture=cup).exclude(holder_name="").exists()
    kept_whole.refresh_from_db()
    assert kept_whole.holder_name == "" and kept_whole.holder_dob is None
    # Run again: nothing more to erase.
    _, again = register_daily(today=due_day(cup))
    assert [s.erased for s in again.steps if s.what == "ticket holders"] == [0]


def test_a_ticket_named_in_an_open_case_is_held_until_the_case_closes(match_day, periods) -> None:
    cup = match_day.cup_tie
    named = factories.ticket(cup, holder_name="Jules Darrowfen", block="S-L2")
    other = factories.ticket(cup, holder_name="Casey Eskerby", block="S-L2")
    case = factories.case(cup)
    subject_add(case=case, by=case.opened_by, kind="ticket_holder", ticket=named)
    out = StringIO()
    call_command("apply_retention", today=due_day(cup).isoformat(), stdout=out)
    assert "2 ticket holders erased" not in out.getvalue()
    assert (
        f"Retention ({DAYS} days after the match): 1 ticket holders erased, "
        "1 held by an open case." in out.getvalue()
    )
    named.refresh_from_db()
    other.refresh_from_db()
    assert named.holder_name == "Jules Darrowfen" and other.holder_name == ""
    case_close(case=case, by=case.opened_by, reason="No further action")
    out = StringIO()
    call_command("apply_retention", today=due_day(cup).isoformat(), stdout=out)
    assert "1 ticket holders erased, 0 held by an open case." in out.getvalue()
    named.refresh_from_db()
    assert named.holder_name == "" and named.holder_dob is None


def test_an_erased_holder_is_never_matched_against_the_register(match_day, periods) -> None:
    from safeground.entry.flagging import fixture_match

    cup = match_day.cup_tie
    ban = factories.ban(match_day.cast.home)
    factories.ticket(cup, holder_name=ban.person.full_name, holder_dob=ban.person.date_of_birth)
    register_daily(today=due_day(cup))
    report = fixture_match(fixture=cup)
    assert report.holders == 0 and report.flagged == 0


def _photo(fixture, author):
    entry = factories.report(fixture)
    return log_entry_photo_add(entry=entry, author=author, upload=factories.upload())


def test_a_log_photo_loses_its_file_keeps_its_hash_and_the_chain_still_verifies(
    match_day, periods
) -> None:
    cup = match_day.cup_tie
    steward = match_day.cast["loggist"]
    photo = _photo(cup, steward)
    path = Path(photo.image.path)
    assert path.exists()
    sha = photo.sha256
    _, report = register_daily(today=due_day(cup))
    [photos] = [s for s in report.steps if s.what == "log photos"]
    assert (photos.erased, photos.held) == (1, 0)
    photo.refresh_from_db()
    assert not path.exists() and not photo.image and photo.erased_at is not None
    assert photo.sha256 == sha
    # The log's record of the photo still carries the hash; the chain verifies.
    assert LogEntry.objects.filter(fixture=cup, kind=LogEntry.Kind.PHOTO, text=sha).exists()
    assert log_verify(cup.pk).ok


def test_photos_of_an_open_cases_entries_are_held(match_day, periods) -> None:
    cup = match_day.cup_tie
    loggist = match_day.cast["loggist"]
    entry = factories.report(cup)
    held = log_entry_photo_add(entry=entry, author=loggist, upload=factories.upload())
    loose = _photo(cup, loggist)
    case = factories.case(cup, entries=[entry])
    _, report = register_daily(today=due_day(cup))
    [photos] = [s for s in report.steps if s.what == "log photos"]
    assert (photos.erased, photos.held) == (1, 1)
    assert Photo.objects.get(pk=held.pk).erased_at is None
    assert Photo.objects.get(pk=loose.pk).erased_at is not None
    case_close(case=case, by=case.opened_by, reason="Closed")
    register_daily(today=due_day(cup))
    assert Photo.objects.get(pk=held.pk).erased_at is not None


def test_an_erased_log_photo_is_refused_by_name_not_a_500(match_day, periods, client_for) -> None:
    from django.urls import reverse

    cup = match_day.cup_tie
    photo = _photo(cup, match_day.cast["loggist"])
    register_daily(today=due_day(cup))
    url = reverse("api:log_photo_file", args=[cup.pk, photo.entry_id, photo.pk])
    response = client_for("loggist").get(url)
    assert response.status_code == 400
    assert response.json()["field"] == "photo_id"
    assert (
        "erased by retention" in response.json()["detail"]
        and photo.sha256 in response.json()["detail"]
    )


def test_a_check_photo_is_erased_keeping_its_hash(
    match_day, periods, client_for, no_second_factor
) -> None:
    from django.urls import reverse

    cup = match_day.cup_tie
    supervisor = match_day.cast["supervisor"]
    check = factories.checks(cup)[0]
    result = check_record(
        check=check, by=supervisor, outcome="pass", photo=factories.upload("gate.png")
    )
    path = Path(result.photo.path)
    assert path.exists()
    _, report = register_daily(today=due_day(cup))
    [step] = [s for s in report.steps if s.what == "check photos"]
    assert step.erased == 1
    result = CheckResult.objects.get(pk=result.pk)
    assert not path.exists() and not result.photo and result.photo_erased_at is not None
    assert len(result.photo_sha256) == 64
    page = client_for("safety").get(reverse("deployment_check_photo", args=[cup.pk, result.pk]))
    assert page.status_code == 404


def test_the_database_still_refuses_any_other_change_to_a_check_result(match_day) -> None:
    cup = match_day.cup_tie
    result = factories.check_done(factories.checks(cup)[0], match_day.cast["supervisor"])
    table = CheckResult._meta.db_table
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(f"UPDATE {table} SET note = 'rewritten' WHERE id = %s", [result.pk])
    with connection.cursor() as cursor:  # the erasure mark alone is allowed
        cursor.execute(
            f"UPDATE {table} SET photo_erased_at = CURRENT_TIMESTAMP WHERE id = %s", [result.pk]
        )


def test_importing_the_file_again_does_not_bring_an_erased_holder_back(match_day, periods) -> None:
    from datetime import date

    from safeground.entry.services import tickets_write
    from safeground.entry.ticket_file import TicketRow

    cup = match_day.cup_tie
    ticket = factories.ticket(cup, holder_name="Casey Vantwick", holder_dob=date(1990, 1, 1))
    register_daily(today=due_day(cup))
    row = TicketRow(1, ticket.barcode, "Casey Vantwick", date(1990, 1, 1), ticket.block_id,
                    ticket.row, ticket.seat, "", ticket.end)  # fmt: skip
    report = tickets_write(fixture=cup, rows=[row])
    assert (report.created, report.updated, report.unchanged) == (0, 0, 1)
    ticket.refresh_from_db()
    assert (ticket.holder_name, ticket.holder_dob) == ("", None)


def test_a_person_named_in_an_open_case_is_held_past_the_registers_retention(
    match_day, settings
) -> None:
    from datetime import date

    from safeground.bans.models import Person

    settings.SAFEGROUND_BAN_RETENTION_DAYS = 730
    home = match_day.cast.home
    old = [
        factories.ban(home, status="expired", starts_on=date(2010, 1, 1), ends_on=date(2012, 1, 1))
        for _ in range(2)
    ]
    case = factories.case(match_day.cup_tie)
    subject_add(case=case, by=case.opened_by, kind="person", person=old[0].person)
    out = StringIO()
    call_command("apply_retention", today="2026-06-01", stdout=out)
    assert (
        "1 people erased" in out.getvalue() and "1 of them held by an open case" in out.getvalue()
    )
    assert Person.objects.get(pk=old[0].person_id).erased_at is None
    assert Person.objects.get(pk=old[1].person_id).erased_at is not None


def test_the_scheduled_task_reports_each_step(match_day, periods) -> None:
    from safeground.privacy.tasks import register_daily_task

    factories.ticket(match_day.league_match)
    result = register_daily_task.enqueue().return_value
    # Today is long after the factories' matches (2024): the ticket is erased.
    assert result["ticket_holders_erased"] == 1 and result["ticket_holders_held"] == 0
    assert result["log_photos_erased"] == 0 and result["check_photos_erased"] == 0
