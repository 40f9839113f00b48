"""The text line seen from the control room (issue 37): a Welsh text the network delivered 25
minutes late, written as a fan writes it, reaches the queue in its category and block with its
delay shown, and the texter is answered in Welsh."""

import hashlib
import hmac
import json
import urllib.request
from datetime import timedelta
from urllib.parse import urlencode

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from safeground.demo.season import rerun_load
from safeground.supporters.models import TextMessage

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SECRET = "text-line-browser-secret"


def _text(site: str, body: str, sent) -> dict:
    raw = urlencode({"from": "+447700900071", "body": body, "time": sent.isoformat()})
    digest = hmac.new(SECRET.encode(), raw.encode(), hashlib.sha256).hexdigest()
    request = urllib.request.Request(
        f"{site}/supporters/sms/london-stadium/",
        data=raw.encode(),
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Safeground-Signature": f"sha256={digest}",
        },
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.load(answer)


def test_a_late_welsh_text_reaches_the_queue_with_its_delay_and_is_answered_in_welsh(
    site, new_page, log_in, settings
):
    settings.SAFEGROUND_SUPPORTERS_SMS_SECRET = SECRET
    rerun = rerun_load()  # the demo's cup tie again: on now
    room = log_in(new_page({"width": 1366, "height": 900}), "loggist")
    room.goto(f"{site}/fixtures/{rerun.pk}/control/")
    expect(room.locator("[data-freshness]")).not_to_have_text("connecting…")

    sent = timezone.now() - timedelta(minutes=25)
    welsh = "Help! Mae dyn wedi llewygu 🚑 bloc 2 eisteddle'r dwyrain isaf rhes C"
    answer = _text(site, welsh, sent)
    assert answer["reference"] and answer["reply"].startswith("Diolch")

    item = room.locator("[data-supporters-queue] li[data-item]")
    expect(item).to_have_count(1, timeout=10_000)
    expect(item).to_have_attribute("data-item-block", "E-L2")
    expect(item).to_contain_text("Someone needs medical help")  # "Help!" does not decide
    expect(item).to_contain_text("Mae dyn wedi llewygu")
    expect(item).to_contain_text("reached us 25 minutes late")
    assert TextMessage.objects.get().body == answer["reply"]
