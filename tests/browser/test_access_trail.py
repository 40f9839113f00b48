"""The auditor's path through the one access trail (ADR 0020): the loggist opens a supporter's
contact from the control room's queue; the auditor finds that read on the access records' page,
by its action, with the report it was about and nothing of the contact itself."""

import pytest
from playwright.sync_api import expect

from safeground.demo.season import rerun_load
from safeground.supporters.services import Sender, report_receive

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DESK = {"width": 1366, "height": 900}


def test_a_contact_read_in_the_queue_is_on_the_auditors_page(site, new_page, log_in):
    rerun = rerun_load()  # the demo's cup tie again, on now: its queue is on the control room
    report = report_receive(
        fixture=rerun,
        sender=Sender("web", "a-phone-at-E-L1"),
        block=rerun.ground.blocks.get(code="E-L1"),
        category="medical",
        text="man collapsed on the stairs",
        contact="07700 900456",
    )
    room = log_in(new_page(DESK), "loggist")
    room.goto(f"{site}/fixtures/{rerun.pk}/control/")
    contact = room.locator("[data-supporters-queue]").get_by_role("link", name="contact (recorded)")
    with room.context.expect_page() as opened:
        contact.click()
    expect(opened.value.locator("body")).to_have_text("07700 900456")

    auditor = log_in(new_page(DESK), "auditor")
    auditor.goto(f"{site}/register/access/")
    auditor.get_by_label("Action").select_option(label="Read a supporter's contact details")
    auditor.get_by_role("button", name="Search").click()
    rows = auditor.locator("[data-access-records] tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.locator("[data-subject]")).to_have_text(f"report {report.reference}")
    expect(rows).to_contain_text("loggist")
    expect(auditor.locator("[data-access-records]")).not_to_contain_text("07700 900456")
    # The same record found by the report's reference alone.
    auditor.goto(f"{site}/register/access/")
    auditor.get_by_label("Subject").fill(report.reference)
    auditor.get_by_role("button", name="Search").click()
    expect(auditor.locator("[data-access-records] [data-subject]")).to_have_text(
        [f"report {report.reference}"]
    )
