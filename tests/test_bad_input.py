"""Bad input at the door (safeground.errors.RequestChecks, and the lean scan route's own checks):
a NUL character in any text field is a 400 naming the field, and a body over its limit a 413, in
the one error shape, never a 500 (PostgreSQL cannot store NUL in text) nor a traceback, even
under DEBUG; nothing is stored."""

import json
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client

from safeground.entry.models import Scan
from safeground.entry.runtime import asgi
from safeground.incidents.models import Broadcast, LogEntry
from tests import factories

NUL = "\x00"


def refused(answer, status: int, code: str, field: str) -> None:
    assert answer.status_code == status, answer.content[:300]
    body = answer.json()
    assert (body["code"], body["field"]) == (code, field) and set(body) == {
        "code",
        "field",
        "detail",
    }


@pytest.fixture
def day(db):
    return factories.match_day()


def test_a_nul_character_in_any_text_field_is_a_400_naming_the_field(day) -> None:
    loggist = factories.logged_in(day.cast["loggist"])
    loggist.raise_request_exception = True
    base = f"/api/fixtures/{day.cup_tie.pk}"
    cases = [
        (f"{base}/log", {"category": "missile", "text": f"coins{NUL}", "block": "S-L2"}, "text"),
        (f"{base}/log", {"category": f"missile{NUL}", "block": "S-L2"}, "category"),
        (f"{base}/broadcasts", {"script": "free", "text": f"hold{NUL}"}, "text"),
        (f"{base}/posts", {"steward": f"steward{NUL}", "zone": "x"}, "steward"),
        (f"{base}/log", {"category": "missile", "links": [], f"b{NUL}": 1}, "b"),
    ]  # fmt: skip
    for url, payload, field in cases:
        refused(
            loggist.post(url, payload, content_type="application/json"), 400, "nul_character", field
        )
    refused(loggist.get(f"{base}/log?category=a%00b"), 400, "nul_character", "category")
    assert not LogEntry.objects.exists() and not Broadcast.objects.exists()


def test_a_nul_character_reaching_the_gates_is_a_400_naming_the_field(day) -> None:
    _, key = factories.device(day.cast.home, profile="scanner")
    device = Client(headers={"X-Device-Key": key})
    refused(device.get("/api/entry/bundle?turnstile=F0%003"), 400, "nul_character", "turnstile")
    scan = {"barcode": "X-1", "turnstile": f"F0{NUL}3", "nonce": str(uuid.uuid4()),
            "scanned_at": (day.cup_tie.kickoff - timedelta(hours=1)).isoformat()}  # fmt: skip
    refused(device.post("/api/entry/scan", scan, content_type="application/json"),
            400, "nul_character", "turnstile")  # fmt: skip
    status, answer = asgi.scan_over_http(key, json.dumps(scan | {"barcode": f"X{NUL}"}).encode())
    assert (status, json.loads(answer)["field"]) == (400, "barcode")  # the lean route alike
    offline = {"scans": [scan | {"turnstile": "F03", "barcode": f"X{NUL}1", "decision": "admit",
                                 "reason": None}]}  # fmt: skip
    refused(device.post("/api/entry/offline-scans", offline, content_type="application/json"),
            400, "nul_character", "scans[0].barcode")  # fmt: skip
    assert not Scan.objects.exists()


def test_a_nul_character_in_a_form_is_refused_before_the_login(db) -> None:
    answer = Client().post("/login/", {"username": f"a{NUL}b", "password": "x"})  # multipart
    assert answer.status_code == 400 and answer.content.decode().startswith("username: ")
    answer = Client().post("/login/", "username=a%00b&password=x",
                           content_type="application/x-www-form-urlencoded")  # fmt: skip
    assert answer.status_code == 400 and answer.content.decode().startswith("username: ")


@pytest.mark.parametrize("megabytes", [3, 20])
def test_a_body_over_the_limit_is_a_413_even_under_debug(day, settings, megabytes) -> None:
    settings.DEBUG = True
    loggist = factories.logged_in(day.cast["loggist"])
    text = "x" * (megabytes * 2**20)
    answer = loggist.post(
        f"/api/fixtures/{day.cup_tie.pk}/log",
        {"category": "missile", "text": text},
        content_type="application/json",
    )
    refused(answer, 413, "too_large", "body")
    assert b"Traceback" not in answer.content and not LogEntry.objects.exists()
    page = loggist.post("/login/", {"username": text})
    assert page.status_code == 413 and b"Traceback" not in page.content


def test_a_body_past_the_django_limit_is_a_413_from_the_api_too(day, settings) -> None:
    """A body whose size is not known before it is read (the check at the door lets it in):
    Django's own limit, answered in the one shape."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    settings.MIDDLEWARE = [m for m in settings.MIDDLEWARE if m != "safeground.errors.RequestChecks"]
    loggist = factories.logged_in(day.cast["loggist"])
    answer = loggist.post(
        f"/api/fixtures/{day.cup_tie.pk}/log",
        {"category": "missile", "text": "x" * 2000},
        content_type="application/json",
    )
    refused(answer, 413, "too_large", "body")


def test_a_photo_upload_fits_and_a_bigger_body_does_not(day, settings) -> None:
    settings.SAFEGROUND_MAX_UPLOAD_BYTES = 50_000
    steward = factories.logged_in(day.cast["loggist"])
    entry = factories.report(day.cup_tie)
    url = f"/api/fixtures/{day.cup_tie.pk}/log/{entry.seq}/photo"
    from django.core.files.uploadedfile import SimpleUploadedFile

    big = SimpleUploadedFile("p.jpg", b"\xff\xd8\xff" + b"0" * 60_000, content_type="image/jpeg")
    refused(steward.post(url, {"photo": big}), 413, "too_large", "body")


def test_evidence_video_has_its_own_limit_above_the_common_upload_limit(
    day, settings, no_second_factor
) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    from safeground.casework.models import Evidence

    settings.SAFEGROUND_MAX_UPLOAD_BYTES = 50_000
    settings.SAFEGROUND_EVIDENCE_MAX_MB = 1
    case = factories.case(day.cup_tie)
    officer = factories.logged_in(case.opened_by)
    video = b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 200_000  # past the common limit, within 1 MB

    def upload(url: str, size: int = len(video)):
        clip = SimpleUploadedFile("cam.mp4", video[:size], content_type="video/mp4")
        return officer.post(url, {"kind": "video", "file": clip, "description": "gate C"})

    answer = upload(f"/cases/{case.pk}/evidence/")
    assert answer.status_code == 302, answer.content[:300]
    assert answer.url.endswith(f"/cases/{case.pk}/"), answer.url
    assert Evidence.objects.get(case=case).size == len(video)
    # Past the evidence limit itself the door refuses it too, before the view reads it.
    settings.SAFEGROUND_EVIDENCE_MAX_MB = 0
    assert upload(f"/cases/{case.pk}/evidence/").status_code == 413
    # A route without a limit of its own keeps the common one.
    entry = factories.report(day.cup_tie)
    refused(
        upload(f"/api/fixtures/{day.cup_tie.pk}/log/{entry.seq}/photo"), 413, "too_large", "body"
    )


def test_a_number_too_big_for_the_database_is_a_400_naming_it(day, settings) -> None:
    # Found by the schema fuzzing (tests/api/test_schema_fuzz.py): on SQLite an id past 2^63 - 1
    # raised OverflowError, a 500.
    settings.SAFEGROUND_REQUIRE_2FA = False
    safety = factories.logged_in(day.cast["safety"])
    safety.raise_request_exception = True
    base = f"/api/fixtures/{day.cup_tie.pk}"
    huge = 10**30
    who = {"entries": [1, huge], "reason": "identify the thrower"}
    answer = safety.post(f"{base}/who-was-there", who, content_type="application/json")
    if connection.vendor == "sqlite":
        refused(answer, 400, "out_of_range", "entries[1]")
    else:  # PostgreSQL compares it as a numeric and finds no such entry
        refused(answer, 404, "casework_refused", "entries")
    refused(safety.get(f"/api/fixtures/{huge}/log"), 404, "not_found", "")


# A multipart body Django cannot read: without its boundary, cut short, JSON sent under a
# multipart type, a form in a charset it cannot decode.
PART = b'--b\r\nContent-Disposition: form-data; name="text"\r\n\r\nBottle thrown\r\n--b--\r\n'
UNREADABLE = {
    "no boundary": ("multipart/form-data", PART),
    "empty boundary": ("multipart/form-data; boundary=", PART),
    "cut short": ("multipart/form-data; boundary=b", PART[:50]),
    "JSON as multipart": ("multipart/form-data; boundary=b", b'{"category": "missile"}'),
    "unknown charset": ("multipart/form-data; boundary=b; charset=nonesuch", PART),
    "UTF-16 form": ("application/x-www-form-urlencoded; charset=utf-16", b"\xff\xfea\x00=\x00"),
}


@pytest.mark.parametrize("kind", list(UNREADABLE))
def test_an_unreadable_body_is_a_400_in_the_one_shape_on_every_route(
    day, settings, no_second_factor, kind
) -> None:
    """Each route that takes a body, the photo upload (multipart) among them, answers in the one
    shape naming the body, under DEBUG too: never Django's HTML page, a traceback or a 500. The
    check-in takes no body: only a body nobody can read is refused before it."""
    settings.DEBUG = True
    content_type, body = UNREADABLE[kind]
    entry = factories.report(day.cup_tie)
    base = f"/api/fixtures/{day.cup_tie.pk}"
    routes = [
        ("steward", f"{base}/check-in"),
        ("loggist", f"{base}/log"),
        ("safety", f"{base}/broadcasts"),
        ("loggist", f"{base}/log/{entry.seq}/photo"),
        ("supervisor", f"{base}/checks/1/result"),
    ]
    for who, url in routes:
        client = factories.logged_in(day.cast[who])
        answer = client.generic("POST", url, body, content_type=content_type)
        assert answer["Content-Type"].startswith("application/json"), (url, answer.content[:200])
        assert b"Traceback" not in answer.content
        readable_as_a_form = kind in ("cut short", "JSON as multipart", "unknown charset")
        if url.endswith("check-in") and readable_as_a_form:
            refused(answer, 409, "deployment_refused", "post")  # the steward has no post yet
        elif url.endswith("photo") and readable_as_a_form:
            refused(answer, 422, "invalid_request", "photo")  # a form without its photo
        else:
            refused(answer, 400, "unreadable_body", "body")
    assert LogEntry.objects.count() == 1 and not Broadcast.objects.exists()


def test_every_api_answer_is_in_the_one_shape_even_for_no_such_route(day, no_second_factor):
    loggist = factories.logged_in(day.cast["loggist"])
    refused(loggist.get("/api/no-such-route"), 404, "not_found", "")
    answer = loggist.delete(f"/api/fixtures/{day.cup_tie.pk}/log")
    refused(answer, 405, "method_not_allowed", "")
    assert "POST" in answer["Allow"]


def test_the_second_factor_step_answers_the_api_in_the_one_shape(day, settings) -> None:
    settings.SAFEGROUND_REQUIRE_2FA = True
    safety = factories.logged_in(day.cast["safety"])  # a privileged role, no second factor yet
    refused(safety.get("/api/fixtures"), 403, "second_factor_required", "")


def test_a_body_that_is_not_an_object_and_a_repeated_parameter_are_refused(
    day, no_second_factor
) -> None:
    """Found by the schema fuzzing: a bare number as the body was read as an object with every
    field at its default (a checkpoint signed), and `limit=1&limit=9` took the last."""
    safety = factories.logged_in(day.cast["safety"])
    base = f"/api/fixtures/{day.cup_tie.pk}"
    factories.report(day.cup_tie)
    for body in ("5", "[]", '"full_time"'):
        answer = safety.post(f"{base}/log/checkpoints", body, content_type="application/json")
        refused(answer, 400, "refused", "")
        assert "JSON object" in answer.json()["detail"] or "parse" in answer.json()["detail"]
    twice = safety.get(f"/api/reports/fixtures/{day.cup_tie.pk}/scans?limit=1&limit=9")
    refused(twice, 400, "refused", "")
    assert "limit" in twice.json()["detail"]
