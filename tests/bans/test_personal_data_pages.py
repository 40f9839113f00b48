"""Names and dates of birth on the register's lists only after a stated reason, each showing
recorded (the subject-access export is tests/privacy/test_subject_access.py)."""

import pytest
from django.test import Client
from django.urls import reverse

from safeground.bans.models import AccessRecord
from safeground.privacy.services import register_daily
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def officer(client_for, no_second_factor) -> Client:
    return client_for("banofficer")


def test_the_flag_list_shows_holders_only_after_a_reason_and_records_each_showing(
    match_day, officer
) -> None:
    ticket = factories.ticket(match_day.cup_tie, holder_name="Morgan Pollendine", block="S-L2")
    flag = factories.flag(ticket)
    url = reverse("flags")
    asked = officer.get(url)
    assert asked.status_code == 200 and b"Why do you need this record?" in asked.content
    assert b"Pollendine" not in asked.content
    refused = officer.post(url, {"reason": "x"})
    assert refused.status_code == 400 and b"say why you need this record" in refused.content
    assert not AccessRecord.objects.filter(action="list_flags").exists()
    assert officer.post(url, {"reason": "Pre-match flag review"}).status_code == 302
    shown = officer.get(url)
    assert b"Morgan Pollendine" in shown.content and b"Pre-match flag review" in shown.content
    officer.get(url)
    records = AccessRecord.objects.filter(action="list_flags")
    assert (
        list(records.values_list("username", "reason", "organisation"))
        == [("banofficer", "Pre-match flag review", match_day.cast.home.pk)] * 2
    )
    assert f"#{flag.pk}" in records.first().detail  # type: ignore[union-attr]


def test_a_register_search_needs_a_reason_and_records_who_it_listed(match_day, officer) -> None:
    ban = factories.ban(match_day.cast.home, first_names="Avery", last_name="Quellmoor")
    url = reverse("register")
    refused = officer.get(url, {"q": "quellmoor", "reason": ""})
    assert refused.status_code == 400
    assert b"say why you need this record" in refused.content and b"Avery" not in refused.content
    assert not AccessRecord.objects.filter(action="search").exists()
    found = officer.get(url, {"q": "quellmoor", "reason": "Police asked about an Avery"})
    assert found.status_code == 200 and b"Avery Quellmoor" in found.content
    record = AccessRecord.objects.get(action="search")
    assert record.reason == "Police asked about an Avery"
    assert f"#{ban.person_id}" in record.detail
    # The reason is offered again for the next search, which is recorded again.
    assert b'value="Police asked about an Avery"' in officer.get(url).content


def test_a_flag_on_an_erased_ticket_says_so(match_day, officer, settings) -> None:
    settings.SAFEGROUND_TICKET_RETENTION_DAYS = 183
    ticket = factories.ticket(match_day.league_match, holder_name="Jules Orbenshaw")
    flag = factories.flag(ticket)
    register_daily()  # today: long after the factories' matches
    officer.post(reverse("flags"), {"reason": "Clearing old flags"})
    page = officer.get(reverse("flags"))
    assert b"Jules Orbenshaw" not in page.content
    assert f'data-flag="{flag.pk}"'.encode() in page.content
    assert b"(erased by retention)" in page.content
