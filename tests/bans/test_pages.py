"""The register's pages: a record only after a reason, and every showing recorded."""

import pytest
from django.test import Client
from django.urls import reverse

from safeground.bans.models import AccessRecord, Ban
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def officer(client_for, no_second_factor) -> Client:
    return client_for("banofficer")


def test_a_record_is_shown_only_after_a_reason_and_each_showing_is_recorded(home, officer) -> None:
    ban = factories.ban(home)
    url = reverse("person", args=[ban.person_id])
    page = officer.get(url)
    assert b"Why do you need this record?" in page.content
    assert ban.person.last_name.encode() not in page.content
    refused = officer.post(url, {"reason": "?"})
    assert refused.status_code == 400 and b"say why you need this record" in refused.content
    assert officer.post(url, {"reason": "Checking a steward's report"}).status_code == 302
    assert not AccessRecord.objects.filter(action="read").exists()
    shown = officer.get(url)
    assert ban.person.last_name.encode() in shown.content
    officer.get(url)
    reads = AccessRecord.objects.filter(action="read", person=ban.person)
    assert (
        list(reads.values_list("username", "reason"))
        == [("banofficer", "Checking a steward's report")] * 2
    )


def test_a_bad_proposal_is_a_form_error_naming_the_field(officer) -> None:
    before = Ban.objects.count()
    response = officer.post(
        reverse("ban_propose"),
        {
            "first_names": "Ellis",
            "last_name": "Vantwick",
            "date_of_birth": "31/02/1990",
            "type": "club_ban",
            "scope": "club",
            "starts_on": "2016-11-01",
            "ends_on": "2015-01-01",
            "grounds": "Threw a coin",
        },
    )
    assert response.status_code == 400
    assert b"Enter a valid date" in response.content
    response = officer.post(
        reverse("ban_propose"),
        {
            "first_names": "Ellis",
            "last_name": "Vantwick",
            "date_of_birth": "28/02/1990",
            "type": "club_ban",
            "scope": "club",
            "starts_on": "2016-11-01",
            "ends_on": "2015-01-01",
            "grounds": "Threw a coin",
        },
    )
    # Well formed, refused by how the dates fit: 409, as the API answers it (BanConflict).
    assert response.status_code == 409 and b"is before the start date" in response.content
    assert Ban.objects.count() == before


def test_the_auditor_searches_the_access_records(home, client_for, no_second_factor) -> None:
    factories.ban(home)  # proposed by banofficer, approved by safety
    factories.ban(home, status="proposed")
    auditor = client_for("auditor")
    page = auditor.get(reverse("access_records"), {"username": "safety", "action": "approve"})
    assert page.status_code == 200
    assert (
        page.context["total"]
        == AccessRecord.objects.filter(username="safety", action="approve").count()
    )
    assert page.context["total"] > 0
    assert auditor.get(reverse("access_records"), {"since": "yesterday"}).status_code == 400
