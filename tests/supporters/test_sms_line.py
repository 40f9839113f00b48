"""The text line as fans and providers use it (issue 37): texts read however they are written,
answered in their own language with a real place of the ground, a late text taken and its delay
shown, the common providers' webhooks with their own signatures, and no promise of a text after
STOP."""

import hashlib
import hmac
import json
import uuid
from datetime import UTC, timedelta
from urllib.parse import urlencode

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from safeground.supporters.models import Reporter, SupporterReport, TextMessage
from safeground.supporters.sms_adapters import twilio_signature, vonage_signature

SECRET = "text-line-test-secret"


@pytest.fixture
def line(settings):
    settings.SAFEGROUND_SUPPORTERS_SMS_SECRET = SECRET
    return settings


def post(ground: str, body: dict[str, str]):
    raw = urlencode(body)
    digest = hmac.new(SECRET.encode(), raw.encode(), hashlib.sha256).hexdigest()
    return Client().post(
        reverse("supporters_sms", args=[ground]),
        raw,
        content_type="application/x-www-form-urlencoded",
        headers={"X-Safeground-Signature": f"sha256={digest}"},
    )


def text(body: str, phone: str = "+447700900011", sent=None) -> dict[str, str]:
    return {"from": phone, "body": body, "time": (sent or timezone.now()).isoformat()}


# --- the providers' signatures, against their documented examples -------------------------------


def test_twilio_signature_is_twilios_documented_example() -> None:
    """Twilio's webhook security guide: token 12345, this URL and these parameters."""
    params = {
        "CallSid": "CA1234567890ABCDE",
        "Caller": "+12349013030",
        "Digits": "1234",
        "From": "+12349013030",
        "To": "+18005551212",
    }
    url = "https://mycompany.com/myapp.php?foo=1&bar=2"
    assert twilio_signature("12345", url, params) == "0/KCTR6DLpKmkAf8muzZqo1nDgQ="
    assert twilio_signature("12345", url, params | {"Digits": "9999"}) != (
        "0/KCTR6DLpKmkAf8muzZqo1nDgQ="
    )


def test_vonage_signature_is_vonages_documented_example() -> None:
    """Vonage's client library's example of the default "md5hash" signature."""
    params = {"a": "1", "b": "2", "timestamp": "1461605396"}
    assert vonage_signature("secret", params) == "6af838ef94998832dbfc29020b564830"
    # The HMAC methods are keyed by the secret over the same string.
    expected = hmac.new(b"secret", b"&a=1&b=2&timestamp=1461605396", "sha256").hexdigest()
    assert vonage_signature("secret", params, "sha256") == expected


# --- the providers' webhooks, end to end ---------------------------------------------------------


@pytest.mark.django_db
def test_a_twilio_text_is_taken_in_twilios_fields_and_signature(tonight, line) -> None:
    line.SAFEGROUND_SUPPORTERS_SMS_PROVIDER = "twilio"
    url = reverse("supporters_sms", args=[tonight.fixture.ground.code])
    params = {
        "From": "+447700900021",
        "To": "+447700900999",
        "Body": "racist chanting blk sl1 rw c st 4",
        "MessageSid": f"SM{uuid.uuid4().hex}",
        "AccountSid": "AC0123",
    }
    signature = twilio_signature(SECRET, f"http://testserver{url}", params)
    client = Client()
    forged = client.post(url, urlencode(params | {"Body": "nothing"}),
                         content_type="application/x-www-form-urlencoded",
                         headers={"X-Twilio-Signature": signature})  # fmt: skip
    assert forged.status_code == 403 and SupporterReport.objects.count() == 0
    response = client.post(url, urlencode(params), content_type="application/x-www-form-urlencoded",
                           headers={"X-Twilio-Signature": signature})  # fmt: skip
    assert response.status_code == 200 and response["Content-Type"].startswith("text/xml")
    assert b"<Response></Response>" in response.content  # the reply goes as every text does
    report = SupporterReport.objects.get()
    assert (report.category, report.block.code, report.row, report.seat) == (
        "abuse-racist", "S-L1", "C", "4"
    )  # fmt: skip
    assert report.reporter.phone == "+447700900021"
    assert report.reference in TextMessage.objects.get().body
    # Twilio delivering the same message again: one report.
    client.post(url, urlencode(params), content_type="application/x-www-form-urlencoded",
                headers={"X-Twilio-Signature": signature})  # fmt: skip
    assert SupporterReport.objects.count() == 1 and TextMessage.objects.count() == 1


@pytest.mark.django_db
def test_a_vonage_text_is_taken_by_get_or_json_with_its_signature(tonight, line) -> None:
    line.SAFEGROUND_SUPPORTERS_SMS_PROVIDER = "vonage"
    line.SAFEGROUND_SUPPORTERS_SMS_SIGNATURE_METHOD = "sha256"
    url = reverse("supporters_sms", args=[tonight.fixture.ground.code])
    sent = (timezone.now() - timedelta(seconds=30)).astimezone(UTC)

    def signed(body: str, phone: str) -> dict[str, str]:
        params = {
            "msisdn": phone,
            "to": "447700900999",
            "messageId": uuid.uuid4().hex,
            "text": body,
            "type": "text",
            "keyword": body.split()[0].upper(),
            "message-timestamp": f"{sent:%Y-%m-%d %H:%M:%S}",
            "timestamp": str(int(sent.timestamp())),
            "nonce": uuid.uuid4().hex,
        }
        return params | {"sig": vonage_signature(SECRET, params, "sha256")}

    by_get = Client().get(url, signed("Fight & pushing in S-L2 row B", "447700900031"))
    assert by_get.status_code == 200
    as_json = signed("MEDICAL man down north lower 2", "447700900032")
    Client().post(url, json.dumps(as_json), content_type="application/json")
    reports = {
        r.reporter.phone: r for r in SupporterReport.objects.select_related("block", "reporter")
    }
    assert (reports["+447700900031"].category, reports["+447700900031"].block.code) == (
        "crowding", "S-L2"
    )  # fmt: skip
    assert (reports["+447700900032"].category, reports["+447700900032"].block.code) == (
        "medical", "N-L2"
    )  # fmt: skip
    assert abs(reports["+447700900032"].sent_at - sent) < timedelta(seconds=1)
    tampered = signed("ok", "447700900033") | {"text": "RACISM block S-L1"}
    assert Client().get(url, tampered).status_code == 403
    assert SupporterReport.objects.count() == 2


@pytest.mark.django_db
def test_a_provider_webhook_without_its_field_is_refused_naming_it(tonight, line) -> None:
    line.SAFEGROUND_SUPPORTERS_SMS_PROVIDER = "twilio"
    url = reverse("supporters_sms", args=[tonight.fixture.ground.code])
    params = {"From": "+447700900041", "To": "+447700900999"}
    response = Client().post(
        url, urlencode(params), content_type="application/x-www-form-urlencoded",
        headers={"X-Twilio-Signature": twilio_signature(SECRET, f"http://testserver{url}", params)},
    )  # fmt: skip
    assert response.status_code == 400 and response.json()["field"] == "Body"
    line.SAFEGROUND_SUPPORTERS_SMS_PROVIDER = "carrier-pigeon"
    unknown = Client().post(
        url, urlencode(params), content_type="application/x-www-form-urlencoded"
    )
    assert unknown.status_code == 403
    assert unknown.json()["field"] == "SAFEGROUND_SUPPORTERS_SMS_PROVIDER"


# --- what the texter is told ---------------------------------------------------------------------


@pytest.mark.django_db
def test_a_late_text_is_taken_with_its_delay_shown_and_told(tonight, line) -> None:
    sent = timezone.now() - timedelta(minutes=25)
    answer = post(tonight.fixture.ground.code, text("fight in S-L2 row D", sent=sent))
    report = SupporterReport.objects.get()
    assert answer.status_code == 200 and answer.json()["reference"] == report.reference
    assert report.sent_at == sent and report.category == "violence"
    assert report.text.startswith("fight") and "reached us 25 minutes late)" in report.text
    assert "reached us 25 minutes after you sent it" in TextMessage.objects.get().body


@pytest.mark.django_db
def test_the_place_question_quotes_a_real_block_of_the_ground(tonight, line) -> None:
    reply = post(tonight.fixture.ground.code, text("someone collapsed")).json()["reply"]
    assert "block N-L1 row F seat 12" in reply  # the small ground's first block, a row it has
    unknown = post(tonight.fixture.ground.code, text("fight block 112")).json()["reply"]
    assert "cannot find block 112 at Riverside Park" in unknown and "block N-L1" in unknown


@pytest.mark.django_db
def test_a_welsh_text_is_read_and_answered_in_welsh_and_so_are_its_later_texts(
    tonight, line, django_capture_on_commit_callbacks
) -> None:
    from safeground.supporters.services import item_accept

    code = tonight.fixture.ground.code
    asked = post(code, text("Mae dyn wedi llewygu, help plis", phone="+447700900051"))
    assert asked.json()["reply"].startswith("Ble rydych chi?")  # "Where are you?"
    assert "bloc N-L1 rhes F sedd 12" in asked.json()["reply"]
    taken = post(code, text("bloc N-L2 rhes C sedd 4", phone="+447700900051"))
    report = SupporterReport.objects.get()
    assert (report.category, report.block.code, report.row, report.seat) == (
        "medical", "N-L2", "C", "4"
    )  # fmt: skip
    assert report.reference in taken.json()["reply"] and "Thank you" not in taken.json()["reply"]
    assert Reporter.objects.get(phone="+447700900051").language == "cy"
    before = TextMessage.objects.count()
    with django_capture_on_commit_callbacks(execute=True):
        item_accept(fixture=tonight.fixture, item_id=report.item_id, by=tonight.cast["loggist"])
    told = TextMessage.objects.order_by("pk")[before:].get().body
    assert report.reference in told and "control room" not in told  # in Welsh


@pytest.mark.django_db
def test_after_stop_no_reply_promises_a_text(tonight, line) -> None:
    code = tonight.fixture.ground.code
    post(code, text("STOP", phone="+447700900061"))
    answer = post(code, text("smoking in S-L3 row B", phone="+447700900061"))
    report = SupporterReport.objects.get()
    assert report.reference in answer.json()["reply"]
    assert "We will text you" not in answer.json()["reply"]
    assert "START" in answer.json()["reply"]
    assert not TextMessage.objects.filter(to="+447700900061").exists()
