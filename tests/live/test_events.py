"""publish(): on commit only, serialised once; Audience.admits: who receives what."""

import json

import pytest
from django.db import transaction

from safeground.live import bus
from safeground.live.events import Audience, Viewer, capture_events, publish

from .conftest import log_entry_data

STEWARD = Viewer(
    user_id=4,
    organisation_ids=frozenset({1}),
    roles=frozenset({"steward"}),
    home_staff=True,
    zone_ids=frozenset({10}),
)
LOGGIST = Viewer(
    user_id=2,
    organisation_ids=frozenset({1}),
    roles=frozenset({"control_operator"}),
    home_staff=True,
)
POLICE = Viewer(
    user_id=7,
    organisation_ids=frozenset({2}),
    roles=frozenset({"police_commander"}),
    home_staff=False,
)
LIAISON = Viewer(
    user_id=9,
    organisation_ids=frozenset({3}),
    roles=frozenset({"safety_officer"}),
    home_staff=False,
)
# A steward who is also a supervisor is not limited to their posts.
STEWARD_AND_SUPERVISOR = Viewer(
    user_id=5,
    organisation_ids=frozenset({1}),
    roles=frozenset({"steward", "steward_supervisor"}),
    home_staff=True,
)


@pytest.fixture
def sent(monkeypatch) -> list[bus.Event]:
    """What reached the bus, in order."""
    calls: list[bus.Event] = []
    monkeypatch.setattr(bus, "send", calls.append)
    return calls


@pytest.mark.django_db(transaction=True)
def test_nothing_goes_out_when_the_transaction_rolls_back(sent) -> None:
    with capture_events() as events, pytest.raises(RuntimeError), transaction.atomic():
        publish(fixture_id=1, type="log.entry", data=log_entry_data(1, "flare"), seq=1)
        raise RuntimeError("the service failed after publishing")
    assert events == []
    assert sent == []


@pytest.mark.django_db(transaction=True)
def test_one_frame_goes_out_after_commit_and_not_before(sent) -> None:
    with capture_events() as events:
        with transaction.atomic():
            publish(
                fixture_id=3,
                type="log.entry",
                data=log_entry_data(12, "flare in S-L1"),
                seq=12,
                audience=Audience(home_only=True),
            )
            assert events == [] and sent == []
        assert len(events) == 1 and sent == events
    event = events[0]
    assert (event.fixture_id, event.type, event.seq) == (3, "log.entry", 12)
    assert event.audience == Audience(home_only=True)
    assert json.loads(event.frame) == {
        "type": "log.entry",
        "fixture": 3,
        "seq": 12,
        "data": log_entry_data(12, "flare in S-L1"),
    }


@pytest.mark.django_db(transaction=True)
def test_nested_captures_see_the_same_events(sent) -> None:
    with capture_events() as outer:
        publish(fixture_id=1, type="log.entry", data=log_entry_data(1), seq=1)
        with capture_events() as inner:
            publish(fixture_id=1, type="log.entry", data=log_entry_data(2), seq=2)
        publish(fixture_id=1, type="log.entry", data=log_entry_data(3), seq=3)
    assert [e.seq for e in outer] == [1, 2, 3]
    assert [e.seq for e in inner] == [2]


@pytest.mark.parametrize(
    ("audience", "steward", "loggist", "police", "liaison", "both_roles"),
    [
        (Audience(), False, True, True, True, True),
        (Audience(zone_ids=frozenset({10})), True, True, True, True, True),
        (Audience(zone_ids=frozenset({11})), False, True, True, True, True),
        (Audience(user_ids=frozenset({4})), True, True, True, True, True),
        (Audience(zone_ids=frozenset({11}), user_ids=frozenset({4})), True, True, True, True, True),
        (Audience(home_only=True), False, True, False, False, True),
        (Audience(home_only=True, zone_ids=frozenset({10})), True, True, False, False, True),
        (Audience(home_only=True, user_ids=frozenset({7})), False, True, True, False, True),
    ],
    ids=[
        "everyone",
        "steward's zone",
        "another zone",
        "addressed to the steward",
        "another zone, addressed to the steward",
        "home only",
        "home only, steward's zone",
        "home only, addressed to the police commander",
    ],
)
def test_who_an_audience_admits(audience, steward, loggist, police, liaison, both_roles) -> None:
    assert audience.admits(STEWARD) is steward
    assert audience.admits(LOGGIST) is loggist
    assert audience.admits(POLICE) is police
    assert audience.admits(LIAISON) is liaison
    assert audience.admits(STEWARD_AND_SUPERVISOR) is both_roles


@pytest.mark.parametrize(
    "audience",
    [
        Audience(),
        Audience(home_only=True, zone_ids=frozenset({3, 1}), user_ids=frozenset({9})),
        Audience(zone_ids=frozenset()),
    ],
)
def test_an_audience_survives_the_wire(audience) -> None:
    assert Audience.from_wire(json.loads(json.dumps(audience.to_wire()))) == audience
