"""The register's API: the pages' rules, a reason for every read, and every read recorded."""

import pytest
from django.test import Client

from safeground.bans.models import AccessRecord, Ban
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def officer(client_for, no_second_factor) -> Client:
    return client_for("banofficer")


def test_a_person_is_read_only_with_a_reason_and_the_read_is_recorded(home, officer) -> None:
    ban = factories.ban(home)
    url = f"/api/register/people/{ban.person_id}"
    assert officer.get(url).status_code == 422
    assert officer.get(url + "?reason=%3F").status_code == 422
    answer = officer.get(url + "?reason=Checking+a+report")
    assert answer.status_code == 200
    assert answer.json()["last_name"] == ban.person.last_name
    assert answer.json()["bans"][0]["id"] == ban.pk
    reads = AccessRecord.objects.filter(action="read", person=ban.person)
    assert list(reads.values_list("username", "reason")) == [("banofficer", "Checking a report")]


def test_listing_bans_names_nobody_and_is_recorded(home, officer) -> None:
    ban = factories.ban(home)
    answer = officer.get("/api/register/bans?reason=Season+return&status=active")
    assert [b["id"] for b in answer.json()] == [ban.pk]
    assert ban.person.last_name not in answer.content.decode()
    listed = AccessRecord.objects.get(action="search")
    assert listed.reason == "Season return" and f"#{ban.pk}" in listed.detail


def test_a_proposal_is_approved_by_another_and_appealed_through_the_api(
    home, officer, client_for
) -> None:
    proposed = officer.post(
        "/api/register/proposals",
        {
            "first_names": "Alex", "last_name": "Example", "date_of_birth": "1990-03-04",
            "type": "club_ban", "scope": "register", "starts_on": "2020-01-01",
            "is_life": True, "grounds": "Pitch incursion at the final whistle.",
        },
        content_type="application/json",
    )  # fmt: skip
    assert proposed.status_code == 201, proposed.content
    ban_id = proposed.json()["id"]
    own = officer.post(
        f"/api/register/bans/{ban_id}/decision",
        {"decision": "approve", "reason": "Looks right"},
        content_type="application/json",
    )
    assert own.status_code == 403
    approved = client_for("safety").post(
        f"/api/register/bans/{ban_id}/decision",
        {"decision": "approve", "reason": "Evidence is clear"},
        content_type="application/json",
    )
    assert approved.json()["status"] == "active"
    appealed = officer.post(
        f"/api/register/bans/{ban_id}/appeal",
        {"reason": "Letter from the supporter"},
        content_type="application/json",
    )
    assert appealed.json()["status"] == "appealed"
    again = officer.post(
        f"/api/register/bans/{ban_id}/appeal",
        {"reason": "Letter from the supporter"},
        content_type="application/json",
    )
    assert again.status_code == 409 and again.json()["field"] == "status"  # its state refuses
    assert Ban.objects.get(pk=ban_id).status == "appealed"
