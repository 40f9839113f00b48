"""Push alerts end to end through a push service on this machine (bench/push_receiver.py): the
server encrypts to the phone's keys and signs with its VAPID key, and the receiver checks both
for real (decrypts with the phone's private key, verifies the ES256 token against the key the
phone subscribed with)."""

from collections.abc import Iterator
from datetime import timedelta

import pytest
from bench.push_receiver import PushReceiver
from django.utils import timezone

from safeground import background
from safeground.accounts.models import User
from safeground.alerts import push, vapid
from safeground.alerts.models import Alert, AlertRecipient, PushSubscription
from safeground.alerts.services import overdue_raise, receipt_token
from safeground.incidents.models import BroadcastAck
from safeground.incidents.services import Place, log_entry_append, log_entry_assign
from safeground.live import catalogue
from safeground.live.events import capture_events
from tests import factories

# The push thread writes what the push service answered: it must see committed rows.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("no_second_factor")]


def user(username: str) -> User:
    return User.objects.get(username=username)


@pytest.fixture
def receiver() -> Iterator[PushReceiver]:
    made = PushReceiver(server_key=vapid.public_key())
    yield made
    background.settle()
    made.close()


@pytest.fixture
def quick_retries(monkeypatch) -> None:
    monkeypatch.setattr(push, "BACK_OFF_SECONDS", (0.05, 0.05))


def subscribe(client_for, receiver: PushReceiver, username: str = "steward", language: str = ""):
    """`language`: the steward page's (its browser asks for it), which subscribes the phone."""
    phone = receiver.phone()
    response = client_for(username).post(
        "/api/alerts/subscriptions",
        {**phone.subscription(), "device": "test phone"},
        content_type="application/json",
        headers={"Accept-Language": language} if language else {},
    )
    assert response.status_code == 201, response.content
    return phone


def broadcast(client_for, fixture, text: str = "Hold the away fans in the concourse") -> int:
    response = client_for("safety").post(
        f"/api/fixtures/{fixture.pk}/broadcasts",
        {"script": "hold", "text": text},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    background.settle()
    return response.json()["id"]


def receipt(client, token: str, state: str):
    return client.post(
        "/api/alerts/receipt",
        {"state": state},
        content_type="application/json",
        headers={"X-Alert-Token": token},
    )


def test_a_broadcast_reaches_the_phone_encrypted_urgent_and_is_delivered_then_acknowledged(
    match_day, client_for, receiver, settings
) -> None:
    phone = subscribe(client_for, receiver)
    factories.post(match_day.cup_tie, user("steward"))
    sent = broadcast(client_for, match_day.cup_tie)

    [message] = receiver.wait_for(1)
    assert message.phone is phone  # decrypted with this phone's private key and secret
    assert (message.urgency, message.ttl) == ("high", settings.SAFEGROUND_PUSH_TTL_SECONDS)
    assert message.claims["aud"] == receiver.origin
    data = message.json()
    assert (data["kind"], data["body"], data["broadcast"]) == (
        "broadcast",
        "Hold the away fans in the concourse",
        sent,
    )
    assert data["url"] == f"/fixtures/{match_day.cup_tie.pk}/steward/" and data["acknowledge"]
    copy = AlertRecipient.objects.get(alert__broadcast_id=sent, user=user("steward"))
    assert copy.sent_at is not None and copy.devices == 1 and copy.delivered_at is None

    # The phone's service worker reports it with the token it carried: no session needed.
    from django.test import Client

    assert receipt(Client(), data["token"], "delivered").status_code == 200
    copy.refresh_from_db()
    assert copy.delivered_at is not None
    assert receipt(Client(), data["token"], "acknowledged").status_code == 200
    assert BroadcastAck.objects.filter(broadcast_id=sent, user=user("steward")).exists()


def test_a_forged_or_other_recipients_token_is_refused(match_day, client_for, receiver) -> None:
    subscribe(client_for, receiver)
    factories.post(match_day.cup_tie, user("steward"))
    broadcast(client_for, match_day.cup_tie)
    token = receiver.wait_for(1)[0].json()["token"]
    number, _, mac = token.partition(".")
    from django.test import Client

    for forged in (f"{int(number) + 1}.{mac}", f"{number}.{'0' * len(mac)}", "", "x.y"):
        assert receipt(Client(), forged, "delivered").status_code == 401
    assert receipt(Client(), receipt_token(10**9), "delivered").status_code == 404
    assert not AlertRecipient.objects.filter(delivered_at__isnull=False).exists()


def test_an_expired_subscription_is_dropped_on_the_push_services_answer(
    match_day, client_for, receiver
) -> None:
    phone = subscribe(client_for, receiver)
    receiver.expired.add(phone.token)
    factories.post(match_day.cup_tie, user("steward"))
    sent = broadcast(client_for, match_day.cup_tie)
    assert not PushSubscription.objects.filter(endpoint=phone.endpoint).exists()
    copy = AlertRecipient.objects.get(alert__broadcast_id=sent)
    assert copy.sent_at is None and "410" in copy.failed


def test_a_failing_push_service_is_tried_again_a_bounded_number_of_times(
    match_day, client_for, receiver, quick_retries, settings
) -> None:
    settings.SAFEGROUND_PUSH_ATTEMPTS = 3
    steady, flaky = subscribe(client_for, receiver), subscribe(client_for, receiver, "supervisor")
    receiver.failing[flaky.token] = [503]  # once, then it takes the message
    receiver.failing[steady.token] = [503, 429, 503, 503, 503]  # never within three tries
    factories.post(match_day.cup_tie, user("steward"))
    factories.post(match_day.cup_tie, user("supervisor"))
    sent = broadcast(client_for, match_day.cup_tie)
    assert [m.phone for m in receiver.messages] == [flaky]
    assert receiver.failing[steady.token] == [503, 503]  # three tries used, no fourth
    copies = {c.user.username: c for c in AlertRecipient.objects.filter(alert__broadcast_id=sent)}
    assert copies["supervisor"].sent_at is not None
    assert copies["steward"].sent_at is None and "503" in copies["steward"].failed
    assert PushSubscription.objects.filter(endpoint=steady.endpoint).exists()  # not expired


def test_a_subscription_must_name_a_known_push_service_and_real_keys(
    match_day, client_for, receiver
) -> None:
    good = receiver.phone().subscription()
    # Well formed but not a push service this installation sends to: 403; not a URL of one:
    # refused by the schema (422, the payload's field named).
    for endpoint, status, field in (
        ("http://10.0.0.5/push/x", 403, "endpoint"),
        ("https://intranet.example.org/push", 403, "endpoint"),
        ("ftp://127.0.0.1/", 422, "payload.endpoint"),
        ("http://[zz]/push", 422, "payload.endpoint"),
    ):
        response = client_for("steward").post(
            "/api/alerts/subscriptions",
            {**good, "endpoint": endpoint},
            content_type="application/json",
        )
        assert (response.status_code, response.json()["field"]) == (status, field), endpoint
    response = client_for("steward").post(
        "/api/alerts/subscriptions",
        {**good, "keys": {"p256dh": "c2hvcnQ", "auth": good["keys"]["auth"]}},
        content_type="application/json",
    )
    assert (response.status_code, response.json()["field"]) == (422, "payload.keys.p256dh")
    # A safety officer has no steward page: no alerts to a phone.
    response = client_for("safety").post(
        "/api/alerts/subscriptions", good, content_type="application/json"
    )
    assert response.status_code == 403
    assert not PushSubscription.objects.exists()


def test_a_task_and_a_flashpoint_warning_in_the_zone_reach_the_steward(
    match_day, client_for, receiver
) -> None:
    from safeground.incidents.services import log_entry_warn

    subscribe(client_for, receiver)
    cup_tie = match_day.cup_tie
    post = factories.post(cup_tie, user("steward"))
    report = log_entry_append(
        fixture=cup_tie, author=user("loggist"), category="missile", text="Coins thrown",
        place=Place(block="S-L1"),
    )  # fmt: skip
    log_entry_assign(entry=report, author=user("loggist"), assignee=user("steward"))
    background.settle()
    log_entry_warn(
        fixture=cup_tie, zone_id=post.zone_id, at=timezone.now(), severity=4,
        text="Flashpoint building in the away section", links=[report.seq],
        quiet_since=timezone.now() - timedelta(minutes=10),
    )  # fmt: skip
    background.settle()
    task, warning = (m.json() for m in receiver.wait_for(2))
    assert task["kind"] == "task" and f"#{report.seq}" in task["title"] and not task["acknowledge"]
    assert (
        warning["kind"] == "warning"
        and warning["body"] == "Flashpoint building in the away section"
    )
    assert all(m.urgency == "high" for m in receiver.messages)


def test_each_phone_reads_its_alerts_in_the_language_it_subscribed_in(
    match_day, client_for, receiver
) -> None:
    """A Welsh steward's locked phone shows a broadcast and a task in Welsh, an English one's in
    English, whatever the control room's language; the alert's record stays in English."""
    welsh = subscribe(client_for, receiver, "steward", language="cy")
    english = subscribe(client_for, receiver, "supervisor", language="en-GB")
    cup_tie = match_day.cup_tie
    factories.post(cup_tie, user("steward"))
    factories.post(cup_tie, user("supervisor"))
    response = client_for("safety").post(
        f"/api/fixtures/{cup_tie.pk}/broadcasts",
        {"script": "hold"},  # no words of its own: the script's name
        content_type="application/json",
        headers={"Accept-Language": "cy"},  # a Welsh control room
    )
    assert response.status_code == 201, response.content
    background.settle()
    said = {m.phone.token: m.json() for m in receiver.wait_for(2)}
    assert said[welsh.token]["title"] == "Ystafell reoli"
    assert said[welsh.token]["body"] == "Daliwch wrth y gatiau"
    assert said[welsh.token]["acknowledge_label"] == "Cydnabod"
    assert (said[english.token]["title"], said[english.token]["body"]) == (
        "Control room",
        "Hold at the gates",
    )
    alert = Alert.objects.get(broadcast_id=response.json()["id"])
    assert (alert.title, alert.body) == ("Control room", "Hold at the gates")

    report = log_entry_append(
        fixture=cup_tie, author=user("loggist"), category="missile", text="",
        place=Place(block="S-L1"),
    )  # fmt: skip
    log_entry_assign(entry=report, author=user("loggist"), assignee=user("steward"))
    background.settle()
    task = receiver.wait_for(3)[-1].json()
    assert task["title"] == f"Tasg i chi: #{report.seq}"
    assert task["body"] == "Taflegryn wedi'i daflu"  # the seeded category's Welsh name


def test_an_urgent_broadcast_not_acknowledged_in_time_is_raised_once(
    match_day, client_for, receiver, settings
) -> None:
    supervisor_phone = subscribe(client_for, receiver, "supervisor")
    cup_tie = match_day.cup_tie
    factories.post(cup_tie, user("steward"))
    sent = broadcast(client_for, cup_tie, "Lock the south gates")
    later = timezone.now() + timedelta(seconds=settings.SAFEGROUND_ALERT_ACK_SECONDS + 1)
    assert overdue_raise(now=timezone.now()) == []  # not yet due
    with capture_events() as events:
        raised = overdue_raise(now=later)
    assert [a.broadcast_id for a in raised] == [sent]
    [event] = [e for e in events if e.type == catalogue.ALERT_OVERDUE]
    assert event.data["unacknowledged"] == ["steward"] and event.data["broadcast"] == sent
    assert event.audience.home_only and user("supervisor").pk in event.audience.user_ids
    background.settle()
    [message] = receiver.wait_for(1)
    assert message.phone is supervisor_phone and message.json()["kind"] == "overdue"
    assert overdue_raise(now=later + timedelta(seconds=30)) == []  # once
    assert Alert.objects.get(broadcast_id=sent, kind="broadcast").raised_at is not None


def test_an_acknowledged_broadcast_is_not_raised(match_day, client_for, settings) -> None:
    cup_tie = match_day.cup_tie
    factories.post(cup_tie, user("steward"))
    sent = broadcast(client_for, cup_tie)
    response = client_for("steward").post(f"/api/fixtures/{cup_tie.pk}/broadcasts/{sent}/ack")
    assert response.status_code == 200
    later = timezone.now() + timedelta(seconds=settings.SAFEGROUND_ALERT_ACK_SECONDS + 1)
    assert overdue_raise(now=later) == []


def test_each_recipient_shows_sent_delivered_seen_and_acknowledged(
    match_day, client_for, receiver
) -> None:
    subscribe(client_for, receiver)
    cup_tie = match_day.cup_tie
    factories.post(cup_tie, user("steward"))
    factories.post(cup_tie, user("supervisor"))  # no phone subscribed
    sent = broadcast(client_for, cup_tie)
    from django.test import Client

    receipt(Client(), receiver.wait_for(1)[0].json()["token"], "delivered")
    steward = client_for("steward")
    assert steward.post(f"/api/fixtures/{cup_tie.pk}/broadcasts/{sent}/seen").status_code == 200
    assert steward.post(f"/api/fixtures/{cup_tie.pk}/broadcasts/{sent}/ack").status_code == 200
    delivery = client_for("loggist").get(f"/api/fixtures/{cup_tie.pk}/broadcasts/{sent}/delivery")
    assert delivery.status_code == 200
    body = delivery.json()
    assert body["counts"] == {"sent": 1, "delivered": 1, "seen": 1, "acknowledged": 1}
    rows = {row["username"]: row for row in body["recipients"]}
    assert all(
        rows["steward"][f"{step}_at"] for step in ("sent", "delivered", "seen", "acknowledged")
    )
    assert (
        rows["supervisor"]["sent_at"] is None
        and rows["supervisor"]["failed"] == "no phone subscribed"
    )
    panel = client_for("loggist").get(f"/fixtures/{cup_tie.pk}/alerts/delivery/")
    assert (
        panel.status_code == 200 and b"sent 1, delivered 1, seen 1, acknowledged 1" in panel.content
    )


def test_the_receiver_refuses_a_token_signed_by_another_key(receiver) -> None:
    """The test push service's own check is real: a token of another key is refused."""
    import requests
    from py_vapid import Vapid02

    phone = receiver.phone()
    other = Vapid02()
    other.generate_keys()
    headers = other.sign({"aud": receiver.origin, "sub": "mailto:x@example.invalid"})
    answer = requests.post(
        phone.endpoint, data=b"x" * 40, timeout=5,
        headers={**headers, "TTL": "60", "Content-Encoding": "aes128gcm"},
    )  # fmt: skip
    assert answer.status_code == 400 and "another server key" in receiver.refused[0]


def test_a_gate_warning_and_a_flashpoint_warning_reach_each_phone_in_its_language(
    match_day, client_for, receiver
) -> None:
    """Issue 41: a gate warning, logged at its onset, reaches the phones of the stewards of the
    zones its gate serves; it and a flashpoint warning are said in each phone's language, from
    the figures they were written with, while the log and the alert's record keep the site's."""
    from safeground.entry.services import gate_warnings_keep
    from safeground.incidents.flashpoint import BUILDING, RATE_UP
    from safeground.incidents.services import log_entry_warn

    welsh = subscribe(client_for, receiver, "steward", language="cy")
    english = subscribe(client_for, receiver, "supervisor", language="en-GB")
    cup_tie = match_day.cup_tie
    post = factories.post(cup_tie, user("steward"))  # the away zone: Gate F serves it
    factories.post(cup_tie, user("supervisor"))
    wave = {
        "kind": "jump", "gate": "Gate F (away)", "reasons": ["forged", "unknown_ticket"],
        "turnstile": "", "figures": {
            "count": 1234, "seconds": 60, "per_minute": 12.5, "before_per_minute": 0.0,
            "baseline_minutes": 10, "factor": 3.0,
        },
    }  # fmt: skip
    gate_warnings_keep(
        fixture_id=cup_tie.pk,
        warnings=[(cup_tie.ground.gates.get(code="F").pk, wave)],
        at=timezone.now(),
    )
    background.settle()
    said = {m.phone.token: m.json() for m in receiver.wait_for(2)}
    assert (said[welsh.token]["title"], said[welsh.token]["body"]) == (
        "Rhybudd gât",
        "Rhybudd gât: Gate F (away): Tocyn ffug neu Tocyn anhysbys, 1,234 yn yr 60 eiliad"
        " diwethaf (12.5 y funud o'i gymharu â 0 y funud gan y gât dros y 10 munud cyn hynny)",
    )
    in_english = (
        "Gate warning: Gate F (away): Forged ticket or Unknown ticket, 1,234 in the last 60 s"
        " (12.5 a minute against the gate's 0 a minute over the 10 minutes before)"
    )
    assert (said[english.token]["title"], said[english.token]["body"]) == (
        "Gate warning",
        in_english,
    )
    alert = Alert.objects.get(kind="warning")
    assert (alert.title, alert.body, alert.entry.text) == ("Gate warning", *[in_english] * 2)

    reason = RATE_UP % {"recent": 5, "minutes": "5", "before": 1}
    log_entry_warn(
        fixture=cup_tie, zone_id=post.zone_id, at=timezone.now(), severity=4,
        text=BUILDING % {"zone": "Away section", "reason": reason, "entries": "#3, #4"},
        links=[], quiet_since=timezone.now() - timedelta(minutes=10),
    )  # fmt: skip
    background.settle()
    said = {m.phone.token: m.json() for m in receiver.wait_for(4)[2:]}
    assert (said[welsh.token]["title"], said[welsh.token]["body"]) == (
        "Rhybudd man poeth",
        "Man poeth yn datblygu yn Away section: 5 adroddiad mewn 5 munud, i fyny o 1 yn y"
        " munudau cyn hynny. Cofnodion: #3, #4.",
    )
    assert said[english.token]["body"] == (
        "Flashpoint building in Away section: 5 reports in 5 min, up from 1 in the minutes"
        " before. Entries: #3, #4."
    )
