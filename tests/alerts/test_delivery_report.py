"""The post-match report gives each broadcast's delivery to phones, not only its acknowledgement:
median and worst seconds after sending, and each recipient's times."""

from collections.abc import Iterator

import pytest
from bench.push_receiver import PushReceiver
from django.test import Client

from safeground import background
from safeground.alerts import vapid
from safeground.reports.match_report import match_report
from tests import factories
from tests.alerts.test_push import broadcast, receipt, subscribe, user

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("no_second_factor")]


@pytest.fixture
def receiver() -> Iterator[PushReceiver]:
    made = PushReceiver(server_key=vapid.public_key())
    yield made
    background.settle()
    made.close()


def test_the_report_gives_delivery_and_acknowledgement_times_recipient_by_recipient(
    match_day, client_for, receiver
) -> None:
    cup_tie = match_day.cup_tie
    subscribe(client_for, receiver)
    factories.post(cup_tie, user("steward"))
    factories.post(cup_tie, user("supervisor"))  # no phone subscribed
    broadcast(client_for, cup_tie)
    token = receiver.wait_for(1)[0].json()["token"]
    assert receipt(Client(), token, "delivered").status_code == 200
    assert receipt(Client(), token, "acknowledged").status_code == 200

    [figures] = match_report(cup_tie).broadcasts

    assert (figures["recipients"], figures["delivered"], figures["acknowledged"]) == (2, 1, 1)
    to_delivered, to_acknowledged = figures["to_delivered"], figures["to_acknowledged"]
    assert to_delivered["median"] == to_delivered["worst"] is not None  # one phone: both its own
    assert 0 <= to_delivered["worst"] <= to_acknowledged["worst"] < 60
    rows = {row["name"]: row for row in figures["by_recipient"]}
    steward, supervisor = str(user("steward")), str(user("supervisor"))
    assert rows[steward]["delivered"] == to_delivered["worst"]
    assert rows[steward]["sent"] is not None and rows[steward]["seen"] is None
    assert rows[supervisor]["delivered"] is None
    assert rows[supervisor]["failed"] == "no phone subscribed"

    page = client_for("safety").get(f"/fixtures/{cup_tie.pk}/report/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "data-broadcast-recipients" in html and steward in html
    assert "no phone subscribed" in html


def test_a_broadcast_to_no_phone_reports_no_times(match_day, client_for) -> None:
    factories.post(match_day.cup_tie, user("steward"))
    broadcast(client_for, match_day.cup_tie)

    [figures] = match_report(match_day.cup_tie).broadcasts

    assert figures["delivered"] == 0
    assert figures["to_delivered"] == {"median": None, "worst": None}
    assert [row["failed"] for row in figures["by_recipient"]] == ["no phone subscribed"]
