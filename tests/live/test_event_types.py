"""Every live event type in the catalogue, set off by the real code path that publishes it, its
data checked against its declared schema (zulip's test_events is the model).

publish() checks the schema itself in the tests (SAFEGROUND_CHECK_LIVE_EVENTS); these tests check
it again on the frame as it went out, and say what each event must contain.
"""

import asyncio
import json
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from pydantic import ValidationError

from safeground.entry.runtime import live_counts, lookups
from safeground.incidents.models import Broadcast
from safeground.live import bus, catalogue
from safeground.live.catalogue import UndeclaredEvent
from safeground.live.events import Event, Viewer, capture_events, publish
from safeground.live.subscriber import Subscriber
from tests import factories

pytestmark = pytest.mark.django_db

# The smallest valid PNG: one transparent pixel.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


@pytest.fixture
def sent(django_capture_on_commit_callbacks) -> Callable[[], object]:
    """A context manager: the events committed while the block runs (on-commit callbacks run)."""

    @contextmanager
    def sent_() -> Iterator[list[Event]]:
        with capture_events() as events, django_capture_on_commit_callbacks(execute=True):
            yield events

    return sent_


def only(events: list[Event], type: str) -> dict:
    """The one event of this type among those sent, its wire data checked against its schema."""
    found = [e for e in events if e.type == type]
    assert len(found) == 1, [e.type for e in events]
    data = json.loads(found[0].frame)["data"]
    catalogue.PUBLISHED[type].model_validate(data)
    return data


@pytest.fixture
def day(match_day, no_second_factor) -> factories.MatchDay:
    factories.categories()
    return match_day


def api(day: factories.MatchDay, path: str) -> str:
    return f"/api/fixtures/{day.cup_tie.pk}{path}"


def post_steward(day, client_for) -> None:
    response = client_for("safety").post(
        api(day, "/posts"), {"steward": "steward", "zone": "away-south-cup"}, "application/json"
    )
    assert response.status_code == 201


def test_log_entry(day, client_for, sent) -> None:
    body = {"category": "missile", "text": "Coins thrown", "severity": 3, "block": "S-L1"}
    with sent() as events:
        response = client_for("loggist").post(api(day, "/log"), body, "application/json")
    assert response.status_code == 201
    data = only(events, catalogue.LOG_ENTRY)
    assert data["entry"]["text"] == "Coins thrown" and data["entry"]["seq"] == 1
    assert data["incident"]["id"] == response.json()["id"]
    assert data["incident"]["status"] == "open" and data["incident"]["zone_ids"]
    with sent() as events:
        client_for("loggist").post(
            api(day, f"/log/{response.json()['id']}/assign"),
            {"assignee": "steward"},
            "application/json",
        )
    data = only(events, catalogue.LOG_ENTRY)
    assert data["entry"]["kind"] == "assignment" and data["entry"]["concerns"] == 1
    assert data["incident"]["assignee_username"] == "steward"
    assert data["incident"]["status"] == "assigned"


def test_log_photo(day, client_for, sent) -> None:
    report = factories.report(day.cup_tie)
    upload = SimpleUploadedFile("pitch.png", PNG, content_type="image/png")
    with sent() as events:
        response = client_for("steward").post(
            api(day, f"/log/{report.pk}/photo"), {"photo": upload}
        )
    assert response.status_code == 201
    data = only(events, catalogue.LOG_PHOTO)
    assert (data["entry"], data["seq"], data["photo"]) == (
        report.pk,
        report.seq,
        response.json()["id"],
    )
    assert data["sha256"] == response.json()["sha256"]
    served = client_for("loggist").get(data["url"])
    assert served.status_code == 200 and served["Content-Type"] == "image/png"
    assert b"".join(served.streaming_content) == PNG


def test_steward_post(day, client_for, sent) -> None:
    with sent() as events:
        post_steward(day, client_for)
    data = only(events, catalogue.STEWARD_POST)
    assert data["steward"] == "steward" and data["post"]
    event = next(e for e in events if e.type == catalogue.STEWARD_POST)
    assert event.audience.user_ids == {day.cast["steward"].pk}  # their phone hears of the move


def test_steward_checkin(day, client_for, sent) -> None:
    post_steward(day, client_for)
    with sent() as events:
        response = client_for("steward").post(
            f"/fixtures/{day.cup_tie.pk}/steward/check-in/", HTTP_HX_REQUEST="true"
        )
    assert response.status_code == 200
    data = only(events, catalogue.STEWARD_CHECKIN)
    assert data["steward"] == "steward" and data["post"] == str(
        day.cup_tie.zones.get(use="away").zone
    )
    sent_event = next(e for e in events if e.type == catalogue.STEWARD_CHECKIN)
    steward = day.cast["steward"]
    assert sent_event.audience.home_only and sent_event.audience.user_ids == {steward.pk}


def test_check_result(day, client_for, sent) -> None:
    post_steward(day, client_for)
    checks = factories.checks(day.cup_tie)
    away = day.cup_tie.zones.get(use="away").zone
    mine = next(c for c in checks if c.zone_id == away.pk)
    with sent() as events:
        response = client_for("steward").post(
            f"/fixtures/{day.cup_tie.pk}/steward/checks/{mine.pk}/", {"outcome": "pass"}
        )
    assert response.status_code == 200
    data = only(events, catalogue.CHECK_RESULT)
    assert (data["check"], data["outcome"], data["place"]) == (mine.pk, "pass", str(away))
    assert (data["done"], data["total"]) == (1, len(checks))
    assert data["open_critical"] == sum(c.critical for c in checks) - mine.critical


def test_broadcast(day, client_for, sent) -> None:
    post_steward(day, client_for)
    with sent() as events:
        response = client_for("safety").post(
            api(day, "/broadcasts"), {"script": "hold"}, "application/json"
        )
    assert response.status_code == 201
    data = only(events, catalogue.BROADCAST)
    assert data["recipients"] == ["steward"] and data["acknowledged"] == []


def test_broadcast_ack(day, client_for, sent) -> None:
    post_steward(day, client_for)
    client_for("safety").post(api(day, "/broadcasts"), {"script": "hold"}, "application/json")
    broadcast = Broadcast.objects.get()
    with sent() as events:
        response = client_for("steward").post(api(day, f"/broadcasts/{broadcast.pk}/ack"))
    assert response.status_code == 200
    data = only(events, catalogue.BROADCAST_ACK)
    assert (data["broadcast"], data["user"]) == (broadcast.pk, "steward")


# --- the decision log and the radio ---------------------------------------------------------------


def test_decision(day, client_for, sent) -> None:
    body = {"decision_maker": "police", "decision": "Hold the away end", "rationale": "Surge"}
    with sent() as events:
        response = client_for("loggist").post(api(day, "/decisions"), body, "application/json")
    assert response.status_code == 201
    data = only(events, catalogue.DECISION)
    assert (data["action"], data["seq"]) == ("logged", response.json()["seq"])
    assert data["decision_maker"] == str(day.cast["police"])
    # The log's rule for an entry with no zone: not to a steward's phone.
    assert not events[-1].audience.admits(
        Viewer(1, frozenset(), frozenset({"steward"}), True, frozenset({1}))
    )


def test_radio_status(day, client_for, sent) -> None:
    post_steward(day, client_for)
    with sent() as events:
        response = client_for("loggist").post(
            api(day, "/radio/down"), {"decision_maker": "safety"}, "application/json"
        )
    assert response.status_code == 201
    data = only(events, catalogue.RADIO_STATUS)
    assert data["down"] is True and data["instructions"]
    only(events, catalogue.BROADCAST)  # the fallback instructions, to every steward
    event = next(e for e in events if e.type == catalogue.RADIO_STATUS)
    assert day.cast["steward"].pk in event.audience.user_ids


def test_stand_closure(day, client_for, sent) -> None:
    from safeground.venues.models import Stand

    post_steward(day, client_for)  # in the away section of the cup: the South Stand's blocks
    south = Stand.objects.get(ground=day.ground, code="S")
    with sent() as events:
        response = client_for("safety").post(
            f"/fixtures/{day.cup_tie.pk}/stands/{south.pk}/evacuation/",
            {"reason": "Crush at the front of S-L2"},
        )
    assert response.status_code == 302
    data = only(events, catalogue.STAND_CLOSURE)
    assert data["stand"] == "S" and data["closed"] is True and data["broadcast"]
    assert data["reason"] == "Crush at the front of S-L2"
    only(events, catalogue.DECISION)
    only(events, catalogue.BROADCAST)
    event = next(e for e in events if e.type == catalogue.STAND_CLOSURE)
    # The control room's, not a steward's phone (the stewards hear it by the broadcast).
    assert not event.audience.admits(
        Viewer(1, frozenset(), frozenset({"steward"}), True, frozenset({1}))
    )


def test_major_incident(day, client_for, sent) -> None:
    from django.urls import reverse

    from safeground.decisions.models import MethaneReport

    parts = {"major_incident": "Yes", "exact_location": "Gate 4", "incident_type": "Crush"}
    with sent() as events:
        response = client_for("police").post(
            reverse("major_incident_declare", args=[day.cup_tie.pk]), parts
        )
    assert response.status_code == 302
    report = MethaneReport.objects.get()
    data = only(events, catalogue.MAJOR_INCIDENT)
    assert (data["id"], data["seq"], data["action"]) == (report.pk, report.entry.seq, "declared")
    assert data["made_by"] == str(day.cast["police"])


def test_alert_overdue(day, client_for, sent, settings) -> None:
    from django.utils import timezone

    from safeground.alerts.services import overdue_raise

    post_steward(day, client_for)
    with sent():
        client_for("safety").post(api(day, "/broadcasts"), {"script": "hold"}, "application/json")
    broadcast = Broadcast.objects.get()
    later = timezone.now() + timedelta(seconds=settings.SAFEGROUND_ALERT_ACK_SECONDS + 1)
    with sent() as events:
        overdue_raise(now=later)
    data = only(events, catalogue.ALERT_OVERDUE)
    assert (data["broadcast"], data["unacknowledged"]) == (broadcast.pk, ["steward"])


# --- the gates ------------------------------------------------------------------------------------


def scan(barcode: str, at, turnstile: str = "F03", **fields) -> dict:
    return {
        "barcode": barcode,
        "turnstile": turnstile,
        "scanned_at": at.isoformat(),
        "nonce": str(uuid.uuid4()),
    } | fields


def scan_online(key: str, body: dict):
    return Client().post(
        "/api/entry/scan", body, content_type="application/json", headers={"X-Device-Key": key}
    )


def upload(key: str, *scans: dict):
    return Client().post(
        "/api/entry/offline-scans",
        {"scans": [s | {"direction": "in", "decision": "admit", "reason": None} for s in scans]},
        content_type="application/json",
        headers={"X-Device-Key": key},
    )


@pytest.fixture
def gate_key(day) -> str:
    lookups.caches_clear()
    _, key = factories.device(day.cast.home)
    yield key
    lookups.caches_clear()


def test_entry_denied(day, gate_key, sent) -> None:
    banned = factories.ticket(day.cup_tie, block="S-L2")
    factories.flag(banned, status="confirmed")
    at = day.cup_tie.kickoff - timedelta(minutes=50)
    with sent() as events:
        answer = scan_online(gate_key, scan(banned.barcode, at)).json()
    assert (answer["decision"], answer["reason"]) == ("deny", "banned")
    data = only(events, catalogue.ENTRY_DENIED)
    assert data["reason"] == "banned" and data["turnstile"] == "F03" and data["flag"]
    assert banned.holder_name not in json.dumps(data)


def test_entry_banned_admitted(day, gate_key, sent) -> None:
    # The scanner's bundle was made before the ban was confirmed, so it let the holder in.
    since = factories.ticket(day.cup_tie, block="S-L2")
    flag = factories.flag(since, status="confirmed")
    with sent() as events:
        upload(gate_key, scan(since.barcode, day.cup_tie.kickoff - timedelta(minutes=50)))
    data = only(events, catalogue.ENTRY_BANNED_ADMITTED)
    assert data["flag"] == flag.pk and data["offline"] is True


def test_entry_conflict(day, gate_key, sent) -> None:
    ticket = factories.ticket(day.cup_tie, block="S-L2")
    _, second_key = factories.device(day.cast.home, profile="scanner")
    at = day.cup_tie.kickoff - timedelta(minutes=50)
    with sent() as events:
        upload(gate_key, scan(ticket.barcode, at))
        upload(second_key, scan(ticket.barcode, at + timedelta(minutes=2), "F07"))
    data = only(events, catalogue.ENTRY_CONFLICT)
    assert data["first"]["turnstile"] == "F03" and data["second"]["turnstile"] == "F07"
    assert data["ticket"]["block"] == "S-L2"


def test_entry_counts(day, gate_key, sent, settings) -> None:
    settings.REDIS_URL = ""  # in-process: counts are read only while a control room listens
    ticket = factories.ticket(day.cup_tie, block="S-L2")
    scan_online(gate_key, scan(ticket.barcode, day.cup_tie.kickoff - timedelta(minutes=50)))
    hub = bus.Hub(redis_url="")

    async def control_room_open() -> None:
        async def send(message) -> None:
            pass

        viewer = Viewer(
            user_id=day.cast["safety"].pk,
            organisation_ids=frozenset({day.cast.home.pk}),
            roles=frozenset({"safety_officer"}),
            home_staff=True,
        )
        await hub.subscribe(Subscriber(fixture_id=day.cup_tie.pk, viewer=viewer, send=send))

    asyncio.run(control_room_open())
    try:
        with sent() as events:
            live_counts.counts_publish(day.cup_tie.pk)
    finally:
        asyncio.run(hub.close())
    data = only(events, catalogue.ENTRY_COUNTS)
    assert data["fixture"] == day.cup_tie.pk and data["admitted"] == 1


def test_entry_gates(day, gate_key, sent) -> None:
    """Gate pressure: each gate's figures and the warnings standing, to the match's control
    room (every viewer of the match but stewards: the default audience)."""
    from safeground.entry import gate_pressure
    from tests.entry.test_gate_pressure import counts_clear

    counts_clear()
    at = day.cup_tie.kickoff - timedelta(minutes=50)
    for n in range(12):  # a wave of unknown tickets at one turnstile: a jump
        scan_online(gate_key, scan(f"NOPE-{n}", at))
    try:
        with sent() as events:
            gate_pressure.gates_publish(day.cup_tie.pk, now=at + timedelta(seconds=1))
    finally:
        counts_clear()
    (event,) = [e for e in events if e.type == catalogue.ENTRY_GATES]
    assert event.audience.zone_ids is None and not event.audience.home_only
    data = only(events, catalogue.ENTRY_GATES)
    gate = next(g for g in data["gates"] if g["denied"])
    assert gate["denied"] == {"unknown_ticket": 12}
    (warning,) = data["warnings"]
    assert (warning["kind"], warning["gate"]) == ("jump", gate["gate"])
    assert warning["figures"]["count"] == 12


def test_supporters_item(day, sent) -> None:
    """A supporter's report through the seat page: its item goes to the home club's staff only
    (no steward, no police), with no reporter's details."""
    from django.utils import timezone

    from safeground.supporters.seats import seat_code

    tonight = factories.fixture(day.ground, kickoff=timezone.now(), zones=factories.CUP_LAYOUT)
    block = day.ground.blocks.get(code="S-L1")
    with sent() as events:
        response = Client().post(
            f"/s/{seat_code(block, 'A', 1)}/", {"category": "abuse-racist", "text": "chants"}
        )
    assert response.status_code == 302, response.content
    data = only(events, catalogue.SUPPORTERS_ITEM)
    assert (data["block"], data["category"], data["count"], data["status"]) == (
        "S-L1", "abuse-racist", 1, "queued",
    )  # fmt: skip
    event = next(e for e in events if e.type == catalogue.SUPPORTERS_ITEM)
    assert event.fixture_id == tonight.pk and event.audience.home_only
    police = Viewer(1, frozenset({day.cast.police.pk}), frozenset({"police_commander"}), False)
    assert not event.audience.admits(police)


# --- the catalogue itself -------------------------------------------------------------------------

TESTED = {
    catalogue.LOG_ENTRY: test_log_entry,
    catalogue.LOG_PHOTO: test_log_photo,
    catalogue.STEWARD_POST: test_steward_post,
    catalogue.BROADCAST: test_broadcast,
    catalogue.BROADCAST_ACK: test_broadcast_ack,
    catalogue.ENTRY_DENIED: test_entry_denied,
    catalogue.ENTRY_BANNED_ADMITTED: test_entry_banned_admitted,
    catalogue.ENTRY_CONFLICT: test_entry_conflict,
    catalogue.ENTRY_COUNTS: test_entry_counts,
    catalogue.STEWARD_CHECKIN: test_steward_checkin,
    catalogue.CHECK_RESULT: test_check_result,
    catalogue.DECISION: test_decision,
    catalogue.RADIO_STATUS: test_radio_status,
    catalogue.STAND_CLOSURE: test_stand_closure,
    catalogue.MAJOR_INCIDENT: test_major_incident,
    catalogue.ALERT_OVERDUE: test_alert_overdue,
    catalogue.SUPPORTERS_ITEM: test_supporters_item,
    catalogue.ENTRY_GATES: test_entry_gates,
}


def test_every_declared_type_has_its_test_here() -> None:
    assert set(TESTED) == set(catalogue.PUBLISHED)


def test_product_code_publishes_by_the_catalogues_names_not_string_literals() -> None:
    """A literal type compiles and runs until someone renames the event; the catalogue's name
    does not."""
    import re
    from pathlib import Path

    import safeground

    literal = re.compile(r"""\btype=["'][a-z_]+\.[a-z_.]+["']""")
    found = [
        f"{path.relative_to(Path(safeground.__file__).parent)}:{number}"
        for path in Path(safeground.__file__).parent.rglob("*.py")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if literal.search(line)
    ]
    assert found == []


def test_an_undeclared_type_is_refused_even_with_the_check_off(settings, sent) -> None:
    settings.SAFEGROUND_CHECK_LIVE_EVENTS = False
    with sent() as events, pytest.raises(UndeclaredEvent, match=r"'log\.typo' is not declared"):
        publish(fixture_id=1, type="log.typo", data={})
    assert events == []


def test_data_that_does_not_fit_the_schema_is_refused_when_checked(settings, sent) -> None:
    wrong = {"steward": "steward", "name": "Sam Steward"}  # no post
    with sent() as events:
        with pytest.raises(ValidationError, match="post"):
            publish(fixture_id=1, type=catalogue.STEWARD_POST, data=wrong)
        with pytest.raises(ValidationError, match="extra"):
            publish(fixture_id=1, type=catalogue.BROADCAST_ACK,
                    data={"broadcast": 1, "user": "a", "name": "A", "holder": "x"})  # fmt: skip
        settings.SAFEGROUND_CHECK_LIVE_EVENTS = False  # production: not checked, so not refused
        publish(fixture_id=1, type=catalogue.STEWARD_POST, data=wrong)
    assert [e.type for e in events] == [catalogue.STEWARD_POST]
