"""Subject access for a text-line phone (UK GDPR Art. 15) is answered for one organisation: the
asking club's reports and texts of that phone, never another club's (issue 36: the other club's
ban officer once exported the home club's reporter's report, text and all)."""

import pytest
from django.urls import reverse

from safeground.accounts.models import Membership, Role, User
from safeground.bans.models import AccessRecord
from safeground.supporters.models import SupporterReport
from safeground.supporters.services import Sender, report_receive
from tests import factories
from tests.supporters.test_sms import SECRET, message, post

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_second_factor")]
PHONE = "+447700900001"


@pytest.fixture
def reported(tonight, settings) -> list[SupporterReport]:
    """The home club's text-line reporter: a report by text, one with a way to be contacted, and
    a message still waiting for its place."""
    settings.SAFEGROUND_SUPPORTERS_SMS_SECRET = SECRET
    ground = tonight.fixture.ground.code
    post(ground, message("RACISM block S-L1 row C seat 3 man in red hat", phone=PHONE))
    report_receive(
        fixture=tonight.fixture,
        sender=Sender("sms", PHONE),
        block=tonight.block("S-L2"),
        category="violence",
        text="fight at the front",
        contact="07700 900123",
    )
    post(ground, message("MEDICAL someone collapsed", phone=PHONE))  # no place yet: it waits
    return list(SupporterReport.objects.order_by("received_at"))


@pytest.fixture
def chelsea_officer(db) -> User:
    """Another club on the same installation, with its own ground and its own ban officer."""
    chelsea = factories.organisation(name="Chelsea")
    factories.ground(chelsea, code="stamford-bridge", name="Stamford Bridge")
    return factories.member(chelsea, Role.BAN_OFFICER, username="chelsea-bans")


def ask(user: User, **more: str):
    data = {"phone": PHONE, "reason": "request by email 3 Dec", **more}
    return factories.logged_in(user).post(reverse("supporters_subject_access"), data)


def test_another_clubs_officer_gets_nothing_of_the_home_clubs_reporter(
    reported, chelsea_officer
) -> None:
    response = ask(chelsea_officer)
    assert response.status_code == 200
    export = response.json()
    assert export["reports"] == [] and export["texts"] == [] and not export.get("awaiting")
    body = response.content.decode()
    for held in ("red hat", "fight at the front", "07700 900123", "someone collapsed"):
        assert held not in body
    for report in reported:
        assert report.reference not in body
    record = AccessRecord.objects.get(action="subject_access_phone")
    assert (record.username, record.organisation.name) == ("chelsea-bans", "Chelsea")
    assert record.subject == "phone ending 0001" and record.reason == "request by email 3 Dec"
    assert PHONE not in f"{record.subject} {record.detail} {record.reason}"


def test_the_home_clubs_officer_gets_everything_held(reported, tonight) -> None:
    response = ask(tonight.cast["banofficer"])
    assert response.status_code == 200
    export = response.json()
    assert export["phone"] == PHONE
    assert [r["reference"] for r in export["reports"]] == [r.reference for r in reported]
    assert [r["text"] for r in export["reports"]] == ["man in red hat", "fight at the front"]
    assert export["reports"][1]["contact"] == "07700 900123"
    assert export["awaiting"]["text"] == "someone collapsed"
    # The replies by text: the first report's reference, then the question for the place.
    assert len(export["texts"]) == 2 and reported[0].reference in export["texts"][0]["body"]
    record = AccessRecord.objects.get(action="subject_access_phone")
    assert (record.username, record.organisation) == ("banofficer", tonight.cast.home)


def test_an_officer_of_two_clubs_names_the_one_asking(reported, tonight, chelsea_officer) -> None:
    Membership.objects.create(
        user=chelsea_officer, organisation=tonight.cast.home, role=Role.BAN_OFFICER
    )
    refused = ask(chelsea_officer)
    assert refused.status_code == 400 and refused.json()["field"] == "organisation"
    assert not AccessRecord.objects.filter(action="subject_access_phone").exists()
    chelsea = chelsea_officer.memberships.exclude(organisation=tonight.cast.home).get()
    assert ask(chelsea_officer, organisation=str(chelsea.organisation_id)).json()["reports"] == []
    home = ask(chelsea_officer, organisation=str(tonight.cast.home.pk)).json()
    assert len(home["reports"]) == 2


def test_an_organisation_the_user_cannot_export_for_is_refused(
    reported, tonight, chelsea_officer
) -> None:
    response = ask(chelsea_officer, organisation=str(tonight.cast.home.pk))
    assert response.status_code == 403
    assert ask(chelsea_officer, organisation="home").status_code == 400
    assert not AccessRecord.objects.filter(action="subject_access_phone").exists()


def test_nobody_without_the_export_right_may_ask(reported, tonight) -> None:
    assert ask(tonight.cast["loggist"]).status_code == 403
    assert ask(tonight.cast["auditor"]).status_code == 403


def test_a_phone_heard_at_both_clubs_grounds_is_exported_to_each_its_own(
    reported, tonight, chelsea_officer
) -> None:
    chelsea = chelsea_officer.memberships.get().organisation
    bridge = chelsea.grounds.get()
    factories.fixture(
        bridge,
        home_club=factories.club("Chelsea", organisation=chelsea),
        away_club=tonight.fixture.home_club,
        kickoff=tonight.fixture.kickoff,
        zones=factories.CUP_LAYOUT,
    )
    post(bridge.code, message("PYRO block S-L3 flare by the corner flag", phone=PHONE))
    theirs = ask(chelsea_officer).json()
    assert [r["text"] for r in theirs["reports"]] == ["flare by the corner flag"]
    assert len(theirs["texts"]) == 1 and not theirs["awaiting"]
    assert "red hat" not in str(theirs) and "someone collapsed" not in str(theirs)
    home = ask(tonight.cast["banofficer"]).json()
    assert [r["text"] for r in home["reports"]] == ["man in red hat", "fight at the front"]
    assert "flare" not in str(home) and len(home["texts"]) == 2
