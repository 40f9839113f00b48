"""The club's text line: real-format messages read into category and place, the signature, the
answer by text (a reference, or a question for the place)."""

import hashlib
import hmac
from urllib.parse import urlencode

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from safeground.supporters.models import SupporterReport, TextMessage
from safeground.supporters.reading import message_read

SECRET = "text-line-test-secret"

# (message as a supporter texts it, category, block, row, seat, words left)
TABLE = [
    ("RACISM block 112 row K seat 23 man in red hat", "abuse-racist", "112", "K", "23",
     "man in red hat"),
    ("racism Block 112 Row K Seat 23", "abuse-racist", "112", "K", "23", ""),
    ("Help! block 108 row C", "other", "108", "C", "", ""),
    ("SFCReport smoking block 108 row F seat 4 two lads vaping", "smoking", "108", "F", "4",
     "two lads vaping"),
    ("SFCREPORT man shouting abuse at the linesman block 30", "abuse-other", "30", "", "",
     "man shouting abuse at the linesman"),
    ("FOUL LANGUAGE blk 12 row AA constant swearing near kids", "other", "12", "AA", "",
     "constant swearing near kids"),
    ("HOMOPHOBIC chanting from the back rows, section S-L2", "abuse-homophobic", "S-L2", "", "",
     "chanting from the back rows"),
    ("Standing. Row D seat 11 block 201 blocking view", "standing", "201", "D", "11",
     "blocking view"),
    ("PYRO flare lit in block 115!!", "pyrotechnics", "115", "", "", "flare lit"),
    ("crush at the bottom of stairs block 104 row A", "crowding", "104", "A", "",
     "crush at the bottom of stairs"),
    ("Medical - man collapsed seat 5 row B block 140", "medical", "140", "B", "5",
     "man collapsed"),
    ("someone throwing coins", "missile", "", "", "", "someone throwing coins"),
    ("HELP man collapsed blk 12 rw K st 4", "medical", "12", "K", "4", "man collapsed"),
    ("report: 🚨 fight in block 7 🚨", "violence", "7", "", "", "fight"),
    ("MISSILE coins thrown from block 9 row 12", "missile", "9", "12", "", "coins thrown"),
    ("DRUNK block 7 row H seat 2 being sick", "drunk", "7", "H", "2", "being sick"),
    ("VIOLENCE fight behind the goal block N-L1", "violence", "N-L1", "", "",
     "fight behind the goal"),
    ("Antisemitic songs block 110", "abuse-antisemitic", "110", "", "", "Antisemitic songs"),
    ("fight in block S-L2 row D", "violence", "S-L2", "D", "", "fight"),
]  # fmt: skip


@pytest.mark.parametrize(("body", "category", "block", "row", "seat", "text"), TABLE)
def test_a_message_is_read_category_anywhere_place_anywhere(body, category, block, row, seat, text):
    parsed = message_read(body)
    assert (parsed.category, parsed.block, parsed.row, parsed.seat) == (category, block, row, seat)
    assert parsed.text == text


def signed(body: dict[str, str]) -> tuple[str, str]:
    raw = urlencode(body)
    digest = hmac.new(SECRET.encode(), raw.encode(), hashlib.sha256).hexdigest()
    return raw, f"sha256={digest}"


def post(ground_code: str, body: dict[str, str], signature: str | None = None):
    raw, good = signed(body)
    return Client().post(
        reverse("supporters_sms", args=[ground_code]),
        raw,
        content_type="application/x-www-form-urlencoded",
        headers={"X-Safeground-Signature": signature if signature is not None else good},
    )


@pytest.fixture
def line(settings):
    settings.SAFEGROUND_SUPPORTERS_SMS_SECRET = SECRET


def message(text: str, phone: str = "+447700900001") -> dict[str, str]:
    return {"from": phone, "body": text, "time": timezone.now().isoformat()}


@pytest.mark.django_db
@pytest.mark.usefixtures("line")
def test_a_text_is_reported_and_answered_with_its_reference(tonight) -> None:
    response = post(tonight.fixture.ground.code, message("RACISM block S-L1 row C seat 3 red hat"))
    report = SupporterReport.objects.get()
    assert response.status_code == 200 and response.json()["reference"] == report.reference
    assert (report.channel, report.block.code, report.row, report.seat) == ("sms", "S-L1", "C", "3")
    assert report.category == "abuse-racist" and report.text == "red hat"
    assert report.reporter.phone == "+447700900001"
    sent = TextMessage.objects.get()
    assert sent.to == "+447700900001" and report.reference in sent.body


@pytest.mark.django_db
@pytest.mark.usefixtures("line")
def test_a_text_without_a_place_is_asked_for_it(tonight) -> None:
    response = post(tonight.fixture.ground.code, message("Help! someone collapsed"))
    assert response.json()["reference"] == "" and "Where are you?" in response.json()["reply"]
    assert SupporterReport.objects.count() == 0
    unknown = post(tonight.fixture.ground.code, message("Help! block 999"))
    assert "cannot find block 999" in unknown.json()["reply"]
    assert TextMessage.objects.count() == 2


@pytest.mark.django_db
@pytest.mark.usefixtures("line")
def test_a_text_giving_only_the_place_completes_the_one_before(tonight) -> None:
    ground = tonight.fixture.ground.code
    post(ground, message("RACISM man in red hat doing monkey chants"))
    post(ground, message("Help! someone collapsed", phone="+447700900002"))
    post(ground, message("block 999"))  # a block the ground has not: still waiting
    answer = post(ground, message("block S-L1 row C seat 3"))
    report = SupporterReport.objects.get()
    assert answer.json()["reference"] == report.reference
    assert (report.category, report.block.code, report.row, report.seat) == (
        "abuse-racist",
        "S-L1",
        "C",
        "3",
    )
    assert report.text == "man in red hat doing monkey chants"
    # Taken once: the next place alone is a report of its own, its words its own.
    post(ground, message("block S-L2 nothing more"))
    assert SupporterReport.objects.order_by("received_at").last().text == "nothing more"
    # The other phone's message waits for its own place; its keyword's category is kept.
    post(ground, message("MEDICAL block N-L1", phone="+447700900002"))
    medical = SupporterReport.objects.get(category="medical")
    assert medical.text == "someone collapsed"


@pytest.mark.django_db
@pytest.mark.usefixtures("line")
def test_a_place_long_after_the_message_is_not_joined_to_it(tonight) -> None:
    from datetime import timedelta

    from safeground.supporters.models import Reporter
    from safeground.supporters.selectors import phone_held
    from safeground.supporters.sms import MAX_AGE

    post(tonight.fixture.ground.code, message("DRUNK man being sick"))
    held = phone_held(phone="+447700900001", organisation_id=tonight.fixture.ground.organisation_id)
    assert held["awaiting"]["text"] == "man being sick"  # what is held is exported
    Reporter.objects.update(awaiting_since=timezone.now() - MAX_AGE - timedelta(minutes=1))
    post(tonight.fixture.ground.code, message("block S-L1"))
    report = SupporterReport.objects.get()
    assert report.category == "other" and report.text == ""


@pytest.mark.django_db
@pytest.mark.usefixtures("line")
def test_the_text_line_hears_when_its_report_is_dealt_with(
    tonight, django_capture_on_commit_callbacks
) -> None:
    from safeground.supporters.services import item_accept

    post(tonight.fixture.ground.code, message("MEDICAL block N-L1 row A"))
    report = SupporterReport.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        item_accept(fixture=tonight.fixture, item_id=report.item_id, by=tonight.cast["loggist"])
    last = TextMessage.objects.order_by("sent_at", "pk").last()
    assert last is not None and f"{report.reference} is being dealt with" in last.body


def decision_texts(tonight, decide, *, phones=("+447700900001",)) -> list[str]:
    """The texts sent once `decide(item_id)` is committed, after the reports' own answers."""
    for phone in phones:
        post(tonight.fixture.ground.code, message("RACISM block S-L1 row A seat 1", phone))
    item_id = SupporterReport.objects.first().item_id
    before = TextMessage.objects.count()
    decide(item_id)
    return list(TextMessage.objects.order_by("pk")[before:].values_list("body", flat=True))


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("line")
def test_each_decision_is_texted_once_a_reporter_after_it_is_committed(tonight) -> None:
    from safeground.supporters.services import item_dismiss, item_merge

    loggist = tonight.cast["loggist"]
    dismissed = decision_texts(
        tonight,
        lambda i: item_dismiss(fixture=tonight.fixture, item_id=i, by=loggist, reason="a joke"),
        phones=("+447700900001", "+447700900001", "+447700900002"),
    )
    assert len(dismissed) == 2 and all("no further action" in t for t in dismissed)
    # A decision that rolls back texts nobody.
    from django.db import transaction

    from tests import factories

    entry = factories.report(tonight.fixture, category="disorder")
    post(tonight.fixture.ground.code, message("VIOLENCE block S-L2", "+447700900003"))
    item_id = SupporterReport.objects.get(category="violence").item_id
    before = TextMessage.objects.count()
    with pytest.raises(RuntimeError), transaction.atomic():
        item_merge(fixture=tonight.fixture, item_id=item_id, by=loggist, seq=entry.seq)
        raise RuntimeError("the request failed after the decision")
    assert TextMessage.objects.count() == before
    item_merge(fixture=tonight.fixture, item_id=item_id, by=loggist, seq=entry.seq)
    assert "is being dealt with" in TextMessage.objects.order_by("pk").last().body


@pytest.mark.django_db
@pytest.mark.usefixtures("line")
def test_a_phone_that_texted_stop_is_not_texted_until_start(
    tonight, django_capture_on_commit_callbacks
) -> None:
    from safeground.supporters.models import Reporter
    from safeground.supporters.services import item_dismiss

    code = tonight.fixture.ground.code
    post(code, message("RACISM block S-L1 row A seat 1"))
    stop = post(code, message("Stop"))
    assert stop.status_code == 200 and "no more texts" in stop.json()["reply"]
    assert Reporter.objects.get().texts_stopped_at is not None
    before = TextMessage.objects.count()
    with django_capture_on_commit_callbacks(execute=True):
        item_dismiss(
            fixture=tonight.fixture,
            item_id=SupporterReport.objects.get().item_id,
            by=tonight.cast["loggist"],
            reason="nothing seen",
        )
    assert TextMessage.objects.count() == before  # the decision, not texted
    post(code, message("START"))
    assert Reporter.objects.get().texts_stopped_at is None
    assert "again" in TextMessage.objects.order_by("pk").last().body


@pytest.mark.django_db
@pytest.mark.usefixtures("line")
def test_a_bad_signature_or_form_is_refused_naming_what(tonight) -> None:
    code = tonight.fixture.ground.code
    assert post(code, message("RACISM block S-L1"), signature="sha256=00").status_code == 403
    bad_phone = post(code, message("RACISM block S-L1", phone="not a number"))
    assert bad_phone.status_code == 400 and bad_phone.json()["field"] == "from"
    undated = message("RACISM block S-L1") | {"time": "at half time"}
    assert post(code, undated).json()["field"] == "time"
    assert post("no-such-ground", message("RACISM block S-L1")).status_code == 404
    assert SupporterReport.objects.count() == 0


@pytest.mark.django_db
def test_with_no_secret_set_every_text_is_refused_naming_the_setting(tonight) -> None:
    response = post(tonight.fixture.ground.code, message("RACISM block S-L1"))
    assert response.status_code == 403
    assert response.json()["field"] == "SAFEGROUND_SUPPORTERS_SMS_SECRET"
    assert "not set" in response.json()["detail"]
    assert SupporterReport.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.usefixtures("line")
def test_a_multipart_text_is_refused_by_name_not_with_a_500(tonight) -> None:
    """The signature is over the raw body, which Django does not keep for a multipart form."""
    response = Client().post(
        reverse("supporters_sms", args=[tonight.fixture.ground.code]),
        message("RACISM block S-L1"),
        headers={"X-Safeground-Signature": "sha256=00"},
    )
    assert response.status_code == 415 and response.json()["field"] == "body"
    assert SupporterReport.objects.count() == 0


def resolve(entry, by, status="resolved") -> None:
    from safeground.incidents.services import log_entry_set_status

    log_entry_set_status(entry=entry, author=by, status=status)


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("line")
def test_the_text_line_hears_once_when_the_incident_is_dealt_with(tonight) -> None:
    from django.db import transaction

    from safeground.supporters.services import item_accept

    loggist = tonight.cast["loggist"]
    code = tonight.fixture.ground.code
    post(code, message("MEDICAL block N-L1 row A", "+447700900001"))
    post(code, message("MEDICAL block N-L1 row B", "+447700900001"))  # one phone, one text
    post(code, message("MEDICAL block N-L1 row C", "+447700900002"))
    first = SupporterReport.objects.filter(reporter__phone="+447700900001").earliest("received_at")
    item = item_accept(fixture=tonight.fixture, item_id=first.item_id, by=loggist)
    before = TextMessage.objects.count()
    # A resolution that rolls back texts nobody.
    with pytest.raises(RuntimeError), transaction.atomic():
        resolve(item.log_entry, loggist)
        raise RuntimeError("the request failed after the resolution")
    assert TextMessage.objects.count() == before
    resolve(item.log_entry, loggist)
    sent = list(TextMessage.objects.order_by("pk")[before:].values_list("to", "body"))
    assert sorted(to for to, _body in sent) == ["+447700900001", "+447700900002"]
    assert (
        "+447700900001",
        f"Your report {first.reference} has been dealt with. Thank you.",
    ) in sent
    # Reopened, resolved again, then closed: nobody is texted twice.
    resolve(item.log_entry, loggist, "open")
    resolve(item.log_entry, loggist)
    resolve(item.log_entry, loggist, "closed")
    assert TextMessage.objects.count() == before + 2


@pytest.mark.django_db
@pytest.mark.usefixtures("line")
def test_a_stopped_phone_is_not_told_its_incident_was_dealt_with(
    tonight, django_capture_on_commit_callbacks
) -> None:
    from safeground.supporters.services import item_merge
    from tests import factories

    loggist = tonight.cast["loggist"]
    code = tonight.fixture.ground.code
    entry = factories.report(tonight.fixture, category="disorder")
    post(code, message("VIOLENCE block S-L2", "+447700900003"))
    post(code, message("Stop", "+447700900003"))
    report = SupporterReport.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        item_merge(fixture=tonight.fixture, item_id=report.item_id, by=loggist, seq=entry.seq)
    before = TextMessage.objects.count()
    with django_capture_on_commit_callbacks(execute=True):
        resolve(entry, loggist)
    report.item.refresh_from_db()
    assert report.item.dealt_with_told_at is not None  # heard of, and the phone left out
    assert TextMessage.objects.count() == before


@pytest.mark.django_db
@pytest.mark.usefixtures("line")
def test_a_report_merged_into_an_incident_already_resolved_hears_it_was_dealt_with(
    tonight, django_capture_on_commit_callbacks
) -> None:
    from safeground.supporters.services import item_merge
    from tests import factories

    loggist = tonight.cast["loggist"]
    entry = factories.report(tonight.fixture, category="disorder")
    with django_capture_on_commit_callbacks(execute=True):
        resolve(entry, loggist)
    post(tonight.fixture.ground.code, message("VIOLENCE block S-L2", "+447700900004"))
    report = SupporterReport.objects.get()
    before = TextMessage.objects.count()
    with django_capture_on_commit_callbacks(execute=True):
        item_merge(fixture=tonight.fixture, item_id=report.item_id, by=loggist, seq=entry.seq)
    bodies = list(TextMessage.objects.order_by("pk")[before:].values_list("body", flat=True))
    assert bodies == [f"Your report {report.reference} has been dealt with. Thank you."]
    # Closed later: told once already, so not again.
    with django_capture_on_commit_callbacks(execute=True):
        resolve(entry, loggist, "closed")
    assert TextMessage.objects.count() == before + 1


@pytest.mark.django_db
@pytest.mark.usefixtures("line")
def test_the_text_line_is_told_in_its_own_language_not_the_loggists(
    tonight, django_capture_on_commit_callbacks
) -> None:
    """A Welsh loggist's decision texts the reporter in the language the line answered them in."""
    from django.utils import translation

    from safeground.supporters.services import item_accept

    post(tonight.fixture.ground.code, message("MEDICAL block N-L1", "+447700900005"))
    report = SupporterReport.objects.get()
    before = TextMessage.objects.count()
    with translation.override("cy"), django_capture_on_commit_callbacks(execute=True):
        item_accept(fixture=tonight.fixture, item_id=report.item_id, by=tonight.cast["loggist"])
    body = TextMessage.objects.order_by("pk")[before:].get().body
    assert body == f"Your report {report.reference} is being dealt with by the control room."
