"""Counts at the gates: admitted per gate, stand and zone against capacity, denials by reason and
gate, the "prevented from attending" figure, the capacity warning, and the throttled live event."""

import asyncio
import contextlib
import os
import time

import pytest
from django.test import Client

from safeground.accounts.models import User
from safeground.entry.models import Scan, Ticket
from safeground.entry.runtime import live_counts
from safeground.entry.selectors import entry_counts
from safeground.live import bus
from safeground.live.events import Viewer, capture_events
from safeground.live.subscriber import Subscriber
from safeground.live.transport import redis_client
from safeground.venues.models import Block

from .conftest import make_ticket

pytestmark = pytest.mark.django_db


def zone(counts: dict, code: str) -> dict:
    return next(z for z in counts["zones"] if z["code"] == code)


def test_counts_equal_the_admissions_in_the_data(gates) -> None:
    for barcode, turnstile in [
        ("AWAY-1", "F03"), ("AWAY-2", "F04"), ("HOME-1", "A01"),  # admitted
        ("AWAY-1", "F05"),  # already inside
        ("BANNED-1", "F03"), ("BANNED-1", "F06"), ("CANCELLED-1", "F03"), ("FLAGGED-1", "F03"),
        ("HOME-1", "F03"), ("NOPE", "A02"),
    ]:  # fmt: skip
        assert gates.scan(barcode, turnstile).status_code == 200
    counts = entry_counts(gates.fixture)
    assert counts["admitted"] == Ticket.objects.filter(inside=True).count() == 3
    gates_by_code = {g["code"]: g for g in counts["gates"]}
    assert (gates_by_code["F"]["admitted"], gates_by_code["A"]["admitted"]) == (2, 1)
    assert (gates_by_code["F"]["denied"], gates_by_code["A"]["denied"]) == (6, 1)
    stands = {s["code"]: s for s in counts["stands"]}
    assert (stands["S"]["admitted"], stands["N"]["admitted"], stands["E"]["admitted"]) == (2, 1, 0)
    assert stands["N"]["capacity"] == sum(
        Block.objects.filter(tier__stand__code="N").values_list("capacity", flat=True)
    )
    away = zone(counts, "away-se-cup")
    assert (away["use"], away["admitted"]) == ("away", 2)
    assert away["capacity"] == sum(
        Block.objects.filter(
            code__in=["E-L9", "E-L10", "S-L1", "S-L2", "S-L3", "S-L4"]
        ).values_list("capacity", flat=True)
    )
    assert zone(counts, "home-north")["admitted"] == 1
    assert counts["denied"]["by_reason"] == {
        "banned": 2, "already_inside": 1, "wrong_end": 1, "wrong_match": 0, "cancelled": 1,
        "unknown_ticket": 1, "flagged": 1, "forged": 0,
    }  # fmt: skip
    assert counts["denied"]["total"] == Scan.objects.filter(decision="deny").count() == 7
    # banned (twice, one ticket) + cancelled + flagged: three people kept out
    assert counts["prevented"] == 3
    assert counts["warnings"] == [] and counts["warning_share"] == 0.9


def test_the_counts_cost_the_same_queries_however_many_are_in(
    gates, django_assert_num_queries
) -> None:
    # On the control room's hot path: a fixed budget, not one more query per ticket or gate.
    gates.scan("AWAY-1")
    with django_assert_num_queries(21):
        entry_counts(gates.fixture)
    for n in range(3, 8):
        make_ticket(gates.fixture, f"AWAY-{n}", "S-L1", "away")
        gates.scan(f"AWAY-{n}")
    gates.scan("HOME-1", "A01")
    gates.scan("NOPE", "A02")
    with django_assert_num_queries(21):
        counts = entry_counts(gates.fixture)
    assert counts["admitted"] == 7


def test_the_capacity_warning_fires_when_a_zone_sold_over_its_safe_capacity_fills(
    gates, settings
) -> None:
    # One person per turnstile an hour: Gate F's 11 turnstiles, shared with two blocks outside
    # the away section, let 11 x 5,100 / 6,800 = 8 of it in (its safe capacity).
    settings.SAFEGROUND_TURNSTILE_RATE = 1
    for n in range(3, 11):
        make_ticket(gates.fixture, f"AWAY-{n}", "S-L1", "away")
    settings.SAFEGROUND_CAPACITY_WARNING = 0.5
    away = zone(entry_counts(gates.fixture), "away-se-cup")
    assert (away["capacity"], away["sold"]) == (8, 11)  # AWAY-1..10 and the flagged one
    for n in range(1, 4):
        gates.scan(f"AWAY-{n}")
    assert zone(entry_counts(gates.fixture), "away-se-cup")["warning"] is False
    gates.scan("AWAY-4")
    counts = entry_counts(gates.fixture)
    assert zone(counts, "away-se-cup")["warning"] is True
    assert counts["warnings"] == [
        "Away section (cup): 4 in of a safe capacity of 8 with 11 tickets sold, warning at 50%"
    ]


def test_the_counts_api_serves_the_control_room(gates, no_second_factor) -> None:
    gates.scan("AWAY-1")
    client = Client()
    client.force_login(User.objects.get(username="loggist"))
    response = client.get(f"/api/fixtures/{gates.fixture.pk}/entry/counts")
    assert response.status_code == 200
    body = response.json()
    assert body["admitted"] == 1 and body["fixture"] == gates.fixture.pk
    assert set(body) >= {"gates", "stands", "zones", "denied", "prevented", "warnings"}
    client.force_login(User.objects.get(username="steward"))
    assert client.get(f"/api/fixtures/{gates.fixture.pk}/entry/counts").status_code == 403


class FakeTimer:
    """Stands in for background.later: records each publish put on the clock, fired by hand."""

    made: list["FakeTimer"] = []

    def __init__(self, interval, function) -> None:
        self.interval, self.function, self.args = interval, function, function.args
        FakeTimer.made.append(self)

    def fire(self) -> None:
        self.function()


def test_live_counts_are_published_at_most_once_an_interval(settings) -> None:
    settings.SAFEGROUND_ENTRY_COUNTS_EVERY = 1.0
    published: list[int] = []
    FakeTimer.made = []
    throttle = live_counts.Throttle(publish=published.append, later=FakeTimer)
    for _ in range(2000):  # a second of scans at 2,000/s
        throttle.touch(7)
    throttle.touch(8)
    assert [t.args for t in FakeTimer.made] == [(7,), (8,)] and published == []
    FakeTimer.made[0].fire()
    assert published == [7]
    throttle.touch(7)  # scans after the publish: one more, an interval later (the final one)
    throttle.touch(7)
    assert len(FakeTimer.made) == 3 and FakeTimer.made[2].interval == 1.0
    FakeTimer.made[2].fire()
    assert published == [7, 7]


def test_slow_counts_are_published_less_often(settings, monkeypatch) -> None:
    settings.SAFEGROUND_ENTRY_COUNTS_EVERY = 1.0
    FakeTimer.made = []
    throttle = live_counts.Throttle(publish=lambda fixture_id: None, later=FakeTimer)
    clock = iter([100.0, 100.2])  # the read of the counts took 0.2 s
    monkeypatch.setattr(live_counts.time, "monotonic", lambda: next(clock))
    throttle.touch(7)
    FakeTimer.made[0].fire()
    throttle.touch(7)
    assert FakeTimer.made[1].interval == pytest.approx(0.2 * live_counts.COST_SHARE)


@contextlib.contextmanager
def control_room_socket(fixture_id: int):
    """A control-room socket open on this process's in-process hub while the block runs."""
    hub = bus.Hub(redis_url="")

    async def open_socket() -> None:
        async def send(message) -> None:
            pass

        viewer = Viewer(user_id=1, organisation_ids=frozenset(), roles=frozenset({"safety"}),
                        home_staff=True)  # fmt: skip
        await hub.subscribe(Subscriber(fixture_id=fixture_id, viewer=viewer, send=send))

    asyncio.run(open_socket())
    try:
        yield
    finally:
        asyncio.run(hub.close())


def test_a_process_whose_interval_another_took_tries_again_after_it(settings) -> None:
    settings.SAFEGROUND_ENTRY_COUNTS_EVERY = 1.0
    FakeTimer.made = []
    answers = iter([0.3, None])  # another process read them; 0.3 s of its interval left
    published: list[int] = []

    def publish(fixture_id: int) -> float | None:
        published.append(fixture_id)
        return next(answers)

    throttle = live_counts.Throttle(publish=publish, later=FakeTimer)
    throttle.touch(7)
    FakeTimer.made[0].fire()
    assert [t.interval for t in FakeTimer.made] == [1.0, 0.3]
    throttle.touch(7)  # a scan meanwhile: already due
    FakeTimer.made[1].fire()
    assert published == [7, 7] and len(FakeTimer.made) == 2


REDIS_URL = os.environ.get("REDIS_URL", "")


@pytest.mark.skipif(not REDIS_URL, reason="Redis mode needs REDIS_URL (redis://127.0.0.1:6379/0)")
def test_in_redis_mode_one_process_reads_the_counts_an_interval(
    gates, settings, django_capture_on_commit_callbacks
) -> None:
    settings.REDIS_URL = REDIS_URL
    gates.scan("AWAY-1")  # (its own timer is off: SAFEGROUND_ENTRY_COUNTS_EVERY is 0 until now)
    settings.SAFEGROUND_ENTRY_COUNTS_EVERY = 2.0
    redis_client(REDIS_URL).delete(f"safeground:entry-counts:{gates.fixture.pk}")
    with capture_events() as events, django_capture_on_commit_callbacks(execute=True):
        first = live_counts.counts_publish(gates.fixture.pk)  # this process takes the interval
        second = live_counts.counts_publish(gates.fixture.pk)  # as another process would
    assert first is None and second is not None and 0 < second <= 2.0
    assert [e.type for e in events] == ["entry.counts"]
    time.sleep(second + 0.05)
    with capture_events() as events, django_capture_on_commit_callbacks(execute=True):
        assert live_counts.counts_publish(gates.fixture.pk) is None
    assert [e.type for e in events] == ["entry.counts"]


def test_the_counts_event_carries_the_counts(
    gates, settings, django_capture_on_commit_callbacks, django_assert_num_queries
) -> None:
    settings.REDIS_URL = ""  # in-process fan-out: only this process's sockets can hear
    gates.scan("AWAY-1")
    with capture_events() as events, django_capture_on_commit_callbacks(execute=True):
        with django_assert_num_queries(0):  # no control room open here: nothing read
            live_counts.counts_publish(gates.fixture.pk)
        with control_room_socket(gates.fixture.pk):
            live_counts.counts_publish(gates.fixture.pk)
    assert [e.type for e in events] == ["entry.counts"]
    assert events[0].data["admitted"] == 1 and not events[0].audience.home_only
