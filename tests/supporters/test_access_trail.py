"""One access trail of personal data (ADR 0020): the register's, the supporters' and the
exports' records are one model, written with their organisation, and the auditor's page reads and
filters all of it, their own organisation's only."""

import pytest
from django.urls import reverse

from safeground.bans.models import AccessRecord
from safeground.bans.services import access_record_write
from safeground.supporters.models import SupporterReport
from safeground.supporters.selectors import report_contact_read
from safeground.supporters.services import Sender, report_receive
from tests import factories

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_second_factor")]


@pytest.fixture
def contact_read(tonight) -> SupporterReport:
    report = report_receive(
        fixture=tonight.fixture,
        sender=Sender("web", "a-device-cookie"),
        block=tonight.block("S-L2"),
        category="medical",
        contact="07700 900123",
    )
    report = SupporterReport.objects.get(pk=report.pk)
    report_contact_read(user=tonight.cast["loggist"], report=report)
    return report


def test_the_auditor_finds_a_supporters_contact_read_by_action_user_and_subject(
    contact_read, tonight, client_for
) -> None:
    factories.ban(tonight.cast.home)  # the register's records are in the same trail
    auditor = client_for("auditor")
    url = reverse("access_records")
    page = auditor.get(url, {"action": "read_contact"})
    assert page.status_code == 200 and page.context["total"] == 1
    record = page.context["records"][0]
    assert (record.username, record.subject) == ("loggist", f"report {contact_read.reference}")
    assert f"report {contact_read.reference}" in page.content.decode()
    assert "07700 900123" not in page.content.decode()  # the trail holds no contact
    by_subject = auditor.get(url, {"subject": contact_read.reference.lower()})
    assert [r.action for r in by_subject.context["records"]] == ["read_contact"]
    assert auditor.get(url, {"username": "loggist"}).context["total"] == 1
    assert (
        auditor.get(url, {"username": "banofficer", "action": "read_contact"}).context["total"] == 0
    )
    everything = auditor.get(url).context["total"]
    assert everything == AccessRecord.objects.filter(organisation=tonight.cast.home).count() > 1


def test_another_organisations_records_are_not_on_the_auditors_page(
    contact_read, tonight, client_for
) -> None:
    chelsea = factories.organisation(name="Chelsea")
    access_record_write(
        user=None,
        action=AccessRecord.Action.SUBJECT_ACCESS_PHONE,
        organisation=chelsea,
        subject="phone ending 0001",
        reason="request by email",
    )
    page = client_for("auditor").get(reverse("access_records"), {"subject": "phone ending"})
    assert page.context["total"] == 0
    chelsea_auditor = factories.member(chelsea, "auditor", username="chelsea-auditor")
    theirs = factories.logged_in(chelsea_auditor).get(reverse("access_records"))
    assert [r.subject for r in theirs.context["records"]] == ["phone ending 0001"]


def test_every_action_can_be_filtered_on(client_for, cast) -> None:
    field = client_for("auditor").get(reverse("access_records")).context["form"]["action"]
    offered = {value for value, _label in field.field.choices}
    assert {"read_contact", "subject_access_phone", "identify", "list_flags"} <= offered
    assert offered - {""} == set(AccessRecord.Action.values)


def test_a_new_record_needs_its_organisation(cast) -> None:
    with pytest.raises(ValueError, match="organisation"):
        access_record_write(user=None, action="search", organisation=None, reason="x")  # type: ignore[arg-type]


def test_a_register_record_names_its_row_never_the_person(cast) -> None:
    ban = factories.ban(cast.home)
    record = AccessRecord.objects.filter(ban=ban, action="propose").get()
    assert record.subject == f"ban #{ban.pk}"
    assert ban.person.last_name not in record.subject


def test_opening_a_supporters_photo_is_on_the_trail(tonight, client_for) -> None:
    import io

    from PIL import Image

    jpeg = io.BytesIO()
    Image.new("RGB", (8, 8), "red").save(jpeg, format="JPEG")
    report = report_receive(
        fixture=tonight.fixture,
        sender=Sender("web", "a-device-cookie"),
        block=tonight.block("S-L2"),
        category="missile",
        photo=factories.upload("p.jpg", jpeg.getvalue(), "image/jpeg"),
    )
    url = reverse("supporters_photo", args=[tonight.fixture.pk, report.pk])
    opened = client_for("loggist").get(url)
    assert opened.status_code == 200 and b"".join(opened.streaming_content)[:2] == b"\xff\xd8"
    record = AccessRecord.objects.get(action=AccessRecord.Action.READ_PHOTO)
    assert (record.username, record.organisation, record.subject) == (
        "loggist",
        tonight.cast.home,
        f"report {report.reference}",
    )
