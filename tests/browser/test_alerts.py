"""A steward's phone with its screen locked: an urgent broadcast arrives as a push (through the
tests' own push service, bench/push_receiver.py, which decrypts it with the phone's keys), is
handed to the steward page's service worker through the DevTools protocol
(`ServiceWorker.deliverPushMessage`, as Chromium's push service would), shows as a notification,
is reported delivered, and is acknowledged from the notification; a tap brings the steward page
back; one nobody acknowledges is raised on the control room's screen."""

import json
import time
from datetime import timedelta

import pytest
from bench.push_receiver import PushReceiver
from django.utils import timezone
from playwright.sync_api import Page, expect

from safeground import background
from safeground.accounts.models import User
from safeground.alerts import vapid
from safeground.alerts.models import AlertRecipient
from safeground.alerts.services import overdue_raise
from safeground.incidents.broadcasting import broadcast_send
from safeground.incidents.models import BroadcastAck
from tests.browser.test_steward import (
    PHONE,
    cup_tie,
    open_control_room,
    open_steward_page,
    post_steward,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Seconds for a pushed message to show as a notification: the service worker is woken first, and
# on a loaded machine (CI, two suites at once) that took over 10 s.
NOTIFICATION_WAIT = 30.0


def until(check, page: Page, timeout: float = 10.0):
    """check() once it is truthy; waiting through the page, so Playwright's events come in."""
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, "timed out"
        page.wait_for_timeout(100)
    return found


def subscribe_through_the_page(phone: Page, subscription: dict) -> int:
    """The page's own call with its session, as after PushManager.subscribe (which needs a real
    push service: here the tests' one stands in for it)."""
    return phone.evaluate(
        """async ([url, body]) => {
            const token = document.querySelector('meta[name="csrf-token"]').content;
            const r = await fetch(url, {method: "POST", credentials: "same-origin",
              headers: {"Content-Type": "application/json", "X-CSRFToken": token},
              body: JSON.stringify(body)});
            return r.status;
        }""",
        ["/api/alerts/subscriptions", subscription],
    )


class LockedPhone:
    """The phone's browser with no steward page on screen: only its service worker runs."""

    def __init__(self, phone: Page, site: str) -> None:
        self.context = phone.context
        self.page = phone
        self.site = site
        self.cdp = self.context.new_cdp_session(phone)
        self.registrations: dict[str, str] = {}
        self.cdp.on("ServiceWorker.workerRegistrationUpdated", self._registered)
        self.cdp.send("ServiceWorker.enable")
        until(lambda: any("/steward/" in scope for scope in self.registrations), phone)

    def _registered(self, event: dict) -> None:
        for registration in event["registrations"]:
            self.registrations[registration["scopeURL"]] = registration["registrationId"]

    def deliver(self, payload: bytes) -> None:
        """What the push service hands the browser: the decrypted message, to the worker."""
        _scope, registration = next(i for i in self.registrations.items() if "/steward/" in i[0])
        self.cdp.send(
            "ServiceWorker.deliverPushMessage",
            {"origin": self.site, "registrationId": registration, "data": payload.decode()},
        )

    def worker(self):
        return until(lambda: next(iter(self.context.service_workers), None), self.page)

    def notifications(self) -> list[dict]:
        return self.worker().evaluate(
            """async () => (await self.registration.getNotifications()).map(
                (n) => ({title: n.title, body: n.body, tag: n.tag,
                         actions: n.actions.map((a) => a.title)}))"""
        )

    def window_for(self, tag: str) -> str | None:
        """The URL of the window a tap on the notification brings forward (None: it opens one)."""
        return self.worker().evaluate(
            """async (tag) => {
                const [n] = await self.registration.getNotifications({tag});
                const open = await alertWindow(n.data.url);
                return open ? open.url : null;
            }""",
            tag,
        )

    def tap(self, tag: str, action: str = ""):
        """The steward taps the notification (or its button): the worker's own click handler."""
        return self.worker().evaluate(
            """async ([tag, action]) => {
                const [n] = await self.registration.getNotifications({tag});
                const result = await alertTapped(n, action);
                return result === true || result === false ? result : Boolean(result);
            }""",
            [tag, action],
        )


def test_a_locked_phone_shows_an_urgent_broadcast_and_acknowledges_it(site, new_page, log_in):
    receiver = PushReceiver(server_key=vapid.public_key())
    try:
        fixture = cup_tie()
        post_steward(fixture)
        loggist = open_control_room(log_in(new_page(), "loggist"), site, fixture)
        phone = open_steward_page(log_in(new_page(PHONE), "steward"), site, fixture)
        phone.context.grant_permissions(["notifications"], origin=site)
        expect(phone.locator("[data-steward]")).to_have_attribute("data-offline-ready", "true")
        expect(phone.locator("[data-alerts-phone]")).to_be_visible()
        assert subscribe_through_the_page(phone, receiver.phone().subscription()) == 201

        locked = LockedPhone(phone, site)
        phone.goto("about:blank")  # the screen locked: no steward page, only the worker
        sent = broadcast_send(
            fixture=fixture, sent_by=User.objects.get(username="safety"), script="hold",
            text="Hold the away fans in the concourse",
        )  # fmt: skip
        background.settle()
        [message] = receiver.wait_for(1)
        assert message.urgency == "high"
        locked.deliver(message.payload)

        [shown] = until(locked.notifications, phone, timeout=NOTIFICATION_WAIT)
        assert shown["body"] == "Hold the away fans in the concourse"
        assert shown["actions"] == ["Acknowledge"]
        copy = AlertRecipient.objects.get(alert__broadcast=sent, user__username="steward")
        until(lambda: AlertRecipient.objects.get(pk=copy.pk).delivered_at, phone)

        assert locked.tap(shown["tag"], "acknowledge") is True
        assert BroadcastAck.objects.filter(broadcast=sent, user__username="steward").exists()
        assert locked.notifications() == []

        # The delivery, recipient by recipient, in the control room's Posts tab.
        loggist.get_by_role("tab", name="Posts").click()
        row = loggist.locator(f'[data-delivery="{sent.pk}"] [data-recipient="steward"]')
        loggist.locator(f'[data-delivery="{sent.pk}"] summary').click()
        expect(row.locator('[data-step="delivered"]')).not_to_have_text("–")
        expect(row.locator('[data-step="acknowledged"]')).not_to_have_text("not yet")
    finally:
        receiver.close()


def test_a_tap_brings_back_the_steward_page_and_an_unacknowledged_one_is_raised(
    site, new_page, log_in, settings
):
    receiver = PushReceiver(server_key=vapid.public_key())
    try:
        fixture = cup_tie()
        post_steward(fixture)
        loggist = open_control_room(log_in(new_page(), "loggist"), site, fixture)
        phone = open_steward_page(log_in(new_page(PHONE), "steward"), site, fixture)
        phone.context.grant_permissions(["notifications"], origin=site)
        expect(phone.locator("[data-steward]")).to_have_attribute("data-offline-ready", "true")
        # Checking in turns alerts on: the browser is asked for a push subscription, which needs
        # its vendor's push service; none is reachable here, and the phone says so.
        phone.get_by_role("button", name="Check in at my post").click()
        expect(phone.locator("[data-checked-in]")).to_be_visible()
        state = phone.locator("[data-alerts-phone]")
        expect(state).to_have_attribute("data-alerts-state", "textFailed", timeout=30_000)
        expect(state).to_contain_text("no push service reachable")
        assert subscribe_through_the_page(phone, receiver.phone().subscription()) == 201
        locked = LockedPhone(phone, site)

        sent = broadcast_send(
            fixture=fixture, sent_by=User.objects.get(username="safety"), script="lockdown",
        )  # fmt: skip
        background.settle()
        locked.deliver(receiver.wait_for(1)[0].payload)
        [shown] = until(locked.notifications, phone, timeout=NOTIFICATION_WAIT)
        # A tap brings the open steward page forward rather than opening a second one (the
        # worker's own choice of window; focus() itself needs a real tap, which no test makes).
        page_url = f"{site}/fixtures/{fixture.pk}/steward/"
        assert locked.window_for(shown["tag"]) == page_url
        phone.goto("about:blank")
        until(lambda: locked.window_for(shown["tag"]) is None, phone)  # none: the tap opens one
        phone.goto(page_url)
        dialog = phone.locator("[data-broadcast]")
        expect(dialog).to_contain_text("Lockdown")  # the page's own broadcast, to acknowledge
        until(
            lambda: (
                AlertRecipient.objects.get(alert__broadcast=sent, alert__kind="broadcast").seen_at
            ),
            phone,
        )

        # Nobody acknowledges it: once its time is up it is raised on the control room's screen.
        later = timezone.now() + timedelta(seconds=settings.SAFEGROUND_ALERT_ACK_SECONDS + 1)
        assert [a.broadcast_id for a in overdue_raise(now=later)] == [sent.pk]
        alarm = loggist.locator("[data-alerts-overdue]")
        expect(alarm).to_be_visible()
        expect(alarm).to_contain_text("Lockdown")
        expect(alarm).to_contain_text("1 steward has not acknowledged")
        assert json.loads(receiver.messages[0].payload)["kind"] == "broadcast"
    finally:
        receiver.close()
