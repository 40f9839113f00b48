"""The factories build what they say, and only that (tests/factories.py)."""

from datetime import date

import pytest

from safeground.accounts.models import Membership, Organisation, User
from safeground.bans.models import Ban, Person
from safeground.entry.models import Ticket, TicketFlag
from safeground.matches.models import Fixture
from safeground.venues.models import Block, Gate, Turnstile, Zone
from tests import factories

pytestmark = pytest.mark.django_db


def test_a_ground_alone_builds_its_club_and_nothing_else() -> None:
    ground = factories.ground()
    assert list(Organisation.objects.values_list("name", flat=True)) == ["Riverside Athletic"]
    assert not User.objects.exists() and not Fixture.objects.exists()
    assert ground.organisation.name == "Riverside Athletic"
    assert list(Block.objects.values_list("code", flat=True)) == [
        "N-L1", "N-L2", "N-L3", "S-L1", "S-L2", "S-L3", "S-L4",
    ]  # fmt: skip
    assert Block.objects.get(code="S-L2").capacity == 200
    assert set(Gate.objects.get(code="F").blocks.values_list("code", flat=True)) == {
        "S-L1", "S-L2", "S-L3",
    }  # fmt: skip
    assert Turnstile.objects.filter(gate__code="F").count() == 10
    assert factories.ground().code == "riverside-park-2"  # a second one: its own code


@pytest.mark.parametrize("layout", [factories.LEAGUE_LAYOUT, factories.CUP_LAYOUT])
def test_each_layout_puts_every_block_in_one_zone_with_an_away_end_and_a_buffer(layout) -> None:
    ground = factories.ground()
    blocks = [
        member.block_id
        for zone in Zone.objects.filter(ground=ground, code__in=layout)
        for member in zone.members.all()
    ]
    assert sorted(blocks) == sorted(ground.blocks.values_list("pk", flat=True))
    assert set(layout.values()) == {"home", "away", "buffer"}


def test_a_fixture_alone_takes_the_default_layout_and_is_shared_with_nobody() -> None:
    fixture = factories.fixture()
    assert dict(fixture.zones.values_list("zone__code", "use")) == factories.LEAGUE_LAYOUT
    assert not fixture.shares.exists()
    assert fixture.home_club.organisation == fixture.ground.organisation
    later = factories.fixture(fixture.ground)
    assert (later.kickoff - fixture.kickoff).days == 7


def test_the_match_day_shares_the_cup_tie_with_the_away_club_only() -> None:
    day = factories.match_day()
    assert set(day.cup_tie.shared_organisation_ids()) == {day.cast.police.pk, day.cast.away.pk}
    assert day.league_match.shared_organisation_ids() == [day.cast.police.pk]
    assert day.cup_tie.away_club.organisation == day.cast.away
    assert dict(day.cup_tie.zones.values_list("zone__code", "use")) == factories.CUP_LAYOUT
    roles = set(Membership.objects.values_list("user__username", "organisation__name", "role"))
    assert ("liaison", "Eastport Rovers", "safety_officer") in roles
    assert len(roles) == len(factories.CAST)


@pytest.mark.parametrize("status", list(factories.STATUS_PATH))
def test_a_ban_reaches_each_status_through_the_register(status) -> None:
    ban = factories.ban(status=status)
    assert ban.status == status
    steps = list(ban.steps.values_list("to_status", flat=True))
    assert steps[0] == "proposed" and steps[-1] == status
    assert ban.proposed_by.memberships.get().role == "ban_officer"


def test_bans_of_one_club_are_different_people_unless_told() -> None:
    club = factories.organisation()
    first, second = factories.ban(club), factories.ban(club)
    assert first.person_id != second.person_id
    person = factories.person(club, first_names="Rowan", last_name="Quellmoor")
    assert factories.ban(club, person=person, date_of_birth=person.date_of_birth).person == person
    assert Person.objects.count() == 3
    # The same ban officer and safety officer each time: no new people per ban.
    assert User.objects.count() == 2


def test_a_ticket_takes_its_end_from_the_layout_and_refuses_a_buffer_block() -> None:
    day = factories.match_day()
    assert factories.ticket(day.cup_tie, block="S-L3").end == "away"  # the cup's away section
    assert factories.ticket(day.league_match, block="N-L1").end == "home"
    with pytest.raises(ValueError, match="no home or away zone"):
        factories.ticket(day.league_match, block="S-L3")  # the league's buffer
    terrace = factories.ticket(day.league_match, block="", area="Family terrace", end="home")
    assert terrace.place == "Family terrace" and terrace.seat == ""
    assert len(factories.tickets(day.cup_tie, 5, prefix="RACE")) == 5
    assert Ticket.objects.filter(barcode__startswith="RACE-", end="away").count() == 5


@pytest.mark.parametrize("status", list(TicketFlag.Status))
def test_a_flag_in_each_status(status) -> None:
    ticket = factories.ticket(factories.fixture(), holder_dob=date(1991, 2, 3))
    flag = factories.flag(ticket, status=status)
    assert flag.status == status and flag.ban.status == Ban.Status.ACTIVE
    ticket.refresh_from_db()
    cancelled = status == TicketFlag.Status.CONFIRMED
    assert (ticket.status == Ticket.Status.CANCELLED) == cancelled


def test_a_device_and_a_report() -> None:
    day = factories.match_day()
    device, key = factories.device(day.cast.home)
    assert key.startswith("sgd_") and device.profile == "turnstile"
    entry = factories.report(day.cup_tie)
    assert (entry.block.code, entry.author.username) == ("S-L1", "loggist")
