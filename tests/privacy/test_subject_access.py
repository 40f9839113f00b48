"""The subject-access export of one person: everything held, recorded as an access."""

import json
from datetime import date

import pytest
from django.test import Client
from django.urls import reverse

from safeground.bans.models import AccessRecord
from safeground.bans.services import BanError
from safeground.casework.services import outcome_record, subject_add
from safeground.privacy.selectors import subject_access_export
from safeground.privacy.services import register_daily
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def officer(client_for, no_second_factor) -> Client:
    return client_for("banofficer")


@pytest.fixture
def held(match_day):
    """A person with an active ban, two of their tickets (one spelt differently, one flagged and
    scanned), someone else's ticket, and a case naming them with an outcome."""
    cup, league = match_day.cup_tie, match_day.league_match
    ban = factories.ban(
        match_day.cast.home,
        first_names="Rowan",
        last_name="Eskerby",
        date_of_birth=date(1991, 3, 4),
    )
    person = ban.person
    theirs = factories.ticket(cup, holder_name="Rowan Eskerby", holder_dob=date(1991, 3, 4))
    spelt = factories.ticket(league, holder_name="ESKERBY Rowen", holder_dob=date(1991, 3, 4))
    namesake = factories.ticket(cup, holder_name="Rowan Eskerby", holder_dob=date(1970, 1, 1))
    factories.flag(theirs, ban)
    factories.device(match_day.cast.home)
    factories.scan(cup, theirs.barcode, turnstile="A01")
    case = factories.case(cup)
    subject = subject_add(case=case, by=case.opened_by, kind="person", person=person)
    outcome_record(case=case, by=case.opened_by, kind="ejection", subject=subject, note="Ejected")
    return {"person": person, "ban": ban, "tickets": {theirs.pk, spelt.pk},
            "namesake": namesake.pk, "case": case}  # fmt: skip


def test_the_export_holds_everything_about_the_person_and_nothing_of_others(
    held, match_day, officer
) -> None:
    person = held["person"]
    response = officer.post(
        reverse("subject_access", args=[person.pk]), {"reason": "SAR ref. 2026/014"}
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert "attachment" in response["Content-Disposition"]
    export = json.loads(response.content)
    assert export["person"]["last_name"] == "Eskerby"
    assert export["person"]["date_of_birth"] == "1991-03-04"
    assert [b["id"] for b in export["bans"]] == [held["ban"].pk]
    assert [s["action"] for s in export["bans"][0]["steps"]][:2] == ["proposed", "approved"]
    assert {t["id"] for t in export["tickets"]} == held["tickets"]
    assert held["namesake"] not in {t["id"] for t in export["tickets"]}
    [scanned] = [t for t in export["tickets"] if t["scans"]]
    assert scanned["scans"][0]["decision"] in {"admit", "deny"}
    assert [f["ban"] for f in export["ticket_flags"]] == [held["ban"].pk]
    [subject] = export["case_subjects"]
    assert subject["case"] == held["case"].pk and subject["outcomes"][0]["kind"] == "ejection"
    actions = [r["action"] for r in export["access_records"]]
    assert {"propose", "approve", "read", "subject_access"} <= set(actions)
    record = AccessRecord.objects.get(action="subject_access")
    assert (record.username, record.reason, record.person_id) == (
        "banofficer", "SAR ref. 2026/014", person.pk
    )  # fmt: skip
    assert export["access_record"] == record.pk


def test_the_export_is_refused_without_a_reason_and_to_roles_that_may_not(
    held, client_for, no_second_factor
) -> None:
    url = reverse("subject_access", args=[held["person"].pk])
    officer = client_for("banofficer")
    response = officer.post(url, {"reason": ""})
    assert response.status_code == 302  # back to the record, with the form's message
    assert not AccessRecord.objects.filter(action="subject_access").exists()
    for who in ("safety", "auditor", "steward", "police"):
        assert client_for(who).post(url, {"reason": "Just looking at it"}).status_code == 403
    assert not AccessRecord.objects.filter(action="subject_access").exists()


def test_an_erased_person_has_nothing_to_export(match_day, settings) -> None:
    ban = factories.ban(
        match_day.cast.home, status="expired", starts_on=date(2010, 1, 1), ends_on=date(2012, 1, 1)
    )
    settings.SAFEGROUND_BAN_RETENTION_DAYS = 730
    register_daily(today=date(2026, 6, 1))
    with pytest.raises(BanError, match="was erased"):
        subject_access_export(
            user=match_day.cast["banofficer"], person_id=ban.person_id, reason="SAR ref. 1"
        )
    assert not AccessRecord.objects.filter(action="subject_access").exists()


def test_the_person_page_offers_the_export_to_the_ban_officer_only(
    held, client_for, no_second_factor
) -> None:
    url = reverse("person", args=[held["person"].pk])
    for who, offered in (("banofficer", True), ("safety", False)):
        client = client_for(who)
        client.post(url, {"reason": "Checking the record"})
        page = client.get(url)
        assert (b"data-subject-access-form" in page.content) is offered
