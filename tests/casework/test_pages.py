"""The casework pages: opening a case, refusals shown beside their form (400, nothing written),
evidence on an entry from the locker, the case page's history and closing."""

import hashlib

import pytest
from django.urls import reverse

from safeground.bans.models import AccessRecord
from safeground.casework.models import Case, CaseEvent, Evidence, Outcome
from safeground.casework.services import subject_add
from safeground.incidents.models import Category
from safeground.incidents.services import Place
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def officer(client_for, no_second_factor):
    return client_for("banofficer")


def test_a_case_is_opened_from_ticked_reports(match_day, officer):
    cup = match_day.cup_tie
    first, second = factories.report(cup), factories.report(cup, place=Place(block="S-L3"))
    url = reverse("casework_fixture", args=[cup.pk])
    page = officer.get(url)
    assert f'data-report="{first.seq}"' in page.text and f'data-report="{second.seq}"' in page.text
    refused = officer.post(url, {"title": "Coins"})
    assert refused.status_code == 400 and not Case.objects.exists()
    opened = officer.post(url, {"entries": [first.pk, second.pk], "title": "Coins from S-L"})
    case = Case.objects.get()
    assert opened.url == reverse("case", args=[case.pk])
    assert set(case.entries.all()) == {first, second}
    shown = officer.get(opened.url)
    assert "Coins from S-L" in shown.text and first.hash[:14] in shown.text


def test_refused_evidence_is_shown_beside_its_form_and_nothing_is_written(match_day, officer):
    case = factories.case(match_day.cup_tie)
    url = reverse("case_evidence_add", args=[case.pk])
    gif = factories.upload("x.gif", b"GIF89a", "image/gif")
    response = officer.post(url, {"kind": "photo", "file": gif})
    assert response.status_code == 400
    assert 'data-error="evidence"' in response.text and "image/gif" in response.text
    assert not Evidence.objects.exists()
    added = officer.post(url, {"kind": "photo", "file": factories.upload(), "description": "still"})
    assert added.status_code == 302
    page = officer.get(reverse("case", args=[case.pk]))
    assert hashlib.sha256(factories.PNG).hexdigest() in page.text


def test_cctv_footage_reference_from_the_page(match_day, officer):
    case = factories.case(match_day.cup_tie)
    response = officer.post(
        reverse("case_evidence_add", args=[case.pk]),
        {
            "kind": "cctv",
            "camera": "CAM 4",
            "footage_from": "2016-10-26T20:31:00",
            "footage_to": "2016-10-26T20:33:30",
        },
    )
    assert response.status_code == 302
    footage = Evidence.objects.get()
    assert (footage.camera, (footage.footage_to - footage.footage_from).seconds) == ("CAM 4", 150)


def test_an_arrest_from_the_page_names_the_offence_and_a_bad_one_is_refused(
    match_day, client_for, no_second_factor
):
    case = factories.case(match_day.cup_tie)
    subject = factories.ticket(match_day.cup_tie, block="S-L1")
    police = client_for("police")
    who = subject_add(case=case, by=match_day.cast["police"], kind="ticket_holder", ticket=subject)
    url = reverse("case_outcome", args=[case.pk])
    bad = police.post(
        url,
        {
            "kind": "arrest",
            "subject": who.pk,
            "offence": "Theft",
            "force": "Met",
            "reference": "CU/1",
        },
    )
    # The service's refusal (not the form's), with its own status as the API gives it.
    assert bad.status_code == 409 and 'data-error="outcome"' in bad.text
    offence = Category.objects.get(code="missile").offence
    good = police.post(
        url,
        {
            "kind": "arrest",
            "subject": who.pk,
            "offence": offence,
            "force": "Metropolitan Police",
            "reference": "CU/2",
        },
    )
    assert good.status_code == 302
    assert Outcome.objects.get().offence == offence


def test_a_ban_from_the_case_page_is_for_ban_officers_only(match_day, client_for, no_second_factor):
    case = factories.case(match_day.cup_tie)
    ticket = factories.ticket(match_day.cup_tie, block="S-L1", holder_name="Rowan Eskerby")
    who = subject_add(
        case=case, by=match_day.cast["banofficer"], kind="ticket_holder", ticket=ticket
    )
    body = {
        "subject": who.pk,
        "scope": "club",
        "starts_on": "2024-01-01",
        "is_life": "on",
        "grounds": "Threw coins.",
    }
    url = reverse("case_ban_propose", args=[case.pk])
    assert client_for("safety").post(url, body).status_code == 403
    assert client_for("banofficer").post(url, body).status_code == 302
    assert Outcome.objects.get().ban.person.full_name == "Rowan Eskerby"


def test_evidence_on_an_entry_from_the_locker(match_day, officer):
    cup = match_day.cup_tie
    entry = factories.report(cup, category="offensive-material", text="Leaflets in S-L2")
    url = reverse("locker_evidence_add", args=[cup.pk])
    refused = officer.post(url, {"kind": "document", "file": factories.upload()})
    assert refused.status_code == 400 and "choose the log entry" in refused.text
    pdf = factories.upload("leaflet.pdf", b"%PDF-1.4 leaflet", "application/pdf")
    assert (
        officer.post(url, {"entry": entry.pk, "kind": "document", "file": pdf}).status_code == 302
    )
    leaflet = Evidence.objects.get()
    assert (leaflet.entry, leaflet.case) == (entry, None)
    locker = officer.get(reverse("evidence_locker", args=[cup.pk]))
    assert leaflet.sha256 in locker.text


def test_closing_a_case_is_in_its_history(match_day, officer):
    case = factories.case(match_day.cup_tie)
    url = reverse("case_close", args=[case.pk])
    assert officer.post(url, {"reason": ""}).status_code == 400
    assert officer.post(url, {"reason": "Ban in force; nothing more to do"}).status_code == 302
    case.refresh_from_db()
    assert case.status == "closed"
    assert CaseEvent.objects.filter(case=case).last().detail == "Ban in force; nothing more to do"
    assert officer.post(url, {"reason": "again"}).status_code == 400


def test_a_case_about_a_home_only_entry_stays_with_the_home_club(
    match_day, client_for, no_second_factor
):
    cup = match_day.cup_tie
    private = factories.case(cup, entries=[factories.report(cup, home_only=True)], title="Ours")
    shared = factories.case(cup, title="Shared")
    police = client_for("police")
    assert police.get(reverse("case", args=[private.pk])).status_code == 403
    assert police.get(reverse("case", args=[shared.pk])).status_code == 200
    listed = police.get(reverse("casework_fixture", args=[cup.pk])).text
    assert "Shared" in listed and "Ours" not in listed
    assert client_for("safety").get(reverse("case", args=[private.pk])).status_code == 200


def test_a_home_only_report_is_not_offered_to_the_police_to_open_a_case_from(
    match_day, client_for, no_second_factor
):
    cup = match_day.cup_tie
    private, shared = factories.report(cup, home_only=True), factories.report(cup)
    url = reverse("casework_fixture", args=[cup.pk])
    police = client_for("police")
    listed = police.get(url).text
    assert f'data-report="{shared.seq}"' in listed
    assert f'data-report="{private.seq}"' not in listed
    refused = police.post(url, {"entries": [private.pk], "title": "Ours"})
    assert refused.status_code == 400 and not Case.objects.exists()
    assert f'data-report="{private.seq}"' in client_for("safety").get(url).text


def test_naming_a_register_person_is_for_register_readers_and_is_recorded(
    match_day, client_for, no_second_factor
):
    case = factories.case(match_day.cup_tie)
    person = factories.person(match_day.cast.home)
    body = {"kind": "person", "person": person.pk}
    url = reverse("case_subject_add", args=[case.pk])
    assert client_for("police").post(url, body).status_code == 403
    assert client_for("banofficer").post(url, body).status_code == 302
    record = AccessRecord.objects.get(person=person, action="read")
    assert (record.username, record.reason) == (
        "banofficer",
        f"named as a subject of case #{case.pk}",
    )
