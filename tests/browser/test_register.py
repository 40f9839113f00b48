"""The register in a browser: the ban officer reviews and confirms a flagged ticket; another user
approves a proposed ban; a search and a subject-access export, each with a stated reason; a
steward cannot reach the register."""

import json
import re

import pytest
from playwright.sync_api import expect

from safeground.bans.models import AccessRecord, Ban
from safeground.entry.models import Ticket, TicketFlag

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_ban_officer_reviews_a_flagged_ticket_and_confirms_it(site, new_page, log_in):
    page = log_in(new_page(), "banofficer")
    page.goto(f"{site}/register/")
    page.locator("[data-open-flags]").click()
    # The holders' names only after a reason, which is recorded with what was listed.
    expect(page.locator("[data-flags]")).to_have_count(0)
    page.get_by_label("Why do you need this record?").fill("Flag review before the cup tie")
    page.get_by_role("button", name="Show the record").click()
    expect(page.locator("[data-shown-because]")).to_contain_text("Flag review before the cup tie")
    expect(page.locator("[data-flags] [data-flag]")).to_have_count(8)
    assert AccessRecord.objects.filter(
        action="list_flags", username="banofficer", reason="Flag review before the cup tie"
    ).exists()
    row = page.locator("[data-flag]", has_text="Rian Larkhaven")
    barcode = row.locator("td").nth(1).inner_text()
    row.get_by_role("link", name=f"Review {barcode}").click()
    page.get_by_label("Why do you need this record?").fill("Pre-match check of flagged tickets")
    page.get_by_role("button", name="Show the record").click()
    expect(page.locator("[data-holder]")).to_have_text("Rian Larkhaven")
    expect(page.locator("[data-banned-name]")).to_have_text("Ryan Larkhaven")
    expect(page.locator("[data-reasons]")).to_contain_text("same date of birth")
    page.get_by_label("Your note").fill("Same person: CCTV still and date of birth")
    page.get_by_role("button", name=re.compile("^Confirm")).click()
    expect(page.locator(".message")).to_contain_text("confirmed")
    expect(page.locator("[data-flags] [data-flag]")).to_have_count(7)
    ticket = Ticket.objects.get(barcode=barcode)
    assert ticket.status == Ticket.Status.CANCELLED
    assert TicketFlag.objects.get(ticket=ticket).status == "confirmed"
    assert AccessRecord.objects.filter(
        action="review_flag", username="banofficer", reason="Pre-match check of flagged tickets"
    ).exists()


def test_another_user_approves_a_proposed_ban(site, new_page, log_in):
    proposal = Ban.objects.get(status="proposed")
    officer = log_in(new_page(), "banofficer")
    officer.goto(f"{site}/register/people/{proposal.person_id}/")
    officer.get_by_label("Why do you need this record?").fill("Checking my own proposal")
    officer.get_by_role("button", name="Show the record").click()
    expect(officer.locator("[data-ban-status]")).to_have_text("Proposed")
    # The proposer gets no approval form.
    expect(officer.locator("[data-decide-form]")).to_have_count(0)

    page = log_in(new_page(), "safety")
    page.goto(f"{site}/register/")
    page.get_by_role("link", name=f"Review ban #{proposal.pk}").click()
    page.get_by_label("Why do you need this record?").fill("Approving a proposed ban")
    page.get_by_role("button", name="Show the record").click()
    page.get_by_label("Your reason").fill("CCTV reviewed; the ban is proportionate")
    page.get_by_role("button", name=f"Approve ban #{proposal.pk}").click()
    # Its start date (27/10/2016) has passed: approved, and in force at once.
    expect(page.locator("[data-ban-status]")).to_have_text("Active")
    expect(page.locator("[data-history]")).to_contain_text("approved by safety")
    expect(page.locator("[data-history]")).to_contain_text("activated by safety")
    proposal.refresh_from_db()
    assert proposal.approved_by is not None and proposal.approved_by.username == "safety"


def test_a_steward_cannot_reach_the_register(site, new_page, log_in):
    page = log_in(new_page(), "steward")
    for path in ["/register/", "/register/flags/", "/register/propose/"]:
        response = page.goto(f"{site}{path}")
        assert response is not None and response.status == 403
        expect(page.locator("h1")).to_have_text("Not allowed")
        expect(page.locator("[data-refusal]")).to_contain_text("Your role does not give you access")


def test_the_auditor_finds_who_read_a_persons_record_and_why(site, new_page, log_in):
    from safeground.accounts.models import User
    from safeground.bans.models import Person
    from safeground.bans.selectors import person_read

    person = Person.objects.order_by("pk").first()
    assert person is not None
    person_read(
        user=User.objects.get(username="banofficer"),
        person_id=person.pk,
        reason="Checking a spelling variant before the cup tie",
    )
    page = log_in(new_page(), "auditor")
    page.get_by_role("link", name="Access records").click()
    page.get_by_label("Username").fill("banofficer")
    page.get_by_role("button", name="Search").click()
    rows = page.locator("[data-access-records] tbody tr")
    expect(rows.filter(has_text="Checking a spelling variant before the cup tie")).to_have_count(1)
    expect(rows.first).to_contain_text("banofficer")
    expect(page.locator("[data-access-records]")).not_to_contain_text("auditor")


def test_a_search_lists_names_only_with_a_reason(site, new_page, log_in):
    page = log_in(new_page(), "banofficer")
    page.goto(f"{site}/register/")
    page.get_by_label("Find a person").fill("larkhaven")
    page.get_by_role("button", name="Find").click()
    expect(page.locator("[data-reason-error]")).to_contain_text("say why you need this record")
    expect(page.locator("[data-found]")).to_have_count(0)
    page.get_by_label("Why are you searching?").fill("Turnstile query at gate F")
    page.get_by_role("button", name="Find").click()
    expect(page.locator("[data-found]")).to_contain_text("Larkhaven")
    record = AccessRecord.objects.get(action="search", username="banofficer")
    assert record.reason == "Turnstile query at gate F" and "listed" in record.detail


def test_the_ban_officer_downloads_everything_held_about_a_person(site, new_page, log_in):
    from safeground.bans.models import Person

    person = Person.objects.get(last_name="Larkhaven")
    page = log_in(new_page(), "banofficer")
    page.goto(f"{site}/register/people/{person.pk}/")
    page.get_by_label("Why do you need this record?").fill("Subject-access request received")
    page.get_by_role("button", name="Show the record").click()
    page.get_by_label("Why are you exporting everything").fill("SAR ref. 2016/007")
    with page.expect_download() as download:
        page.get_by_role("button", name="Download everything held").click()
    path = download.value.path()
    export = json.loads(path.read_text(encoding="utf-8"))
    assert export["person"]["last_name"] == "Larkhaven"
    assert export["bans"] and export["tickets"]
    assert download.value.suggested_filename == f"subject-access-person-{person.pk}.json"
    assert AccessRecord.objects.filter(
        action="subject_access", username="banofficer", reason="SAR ref. 2016/007", person=person
    ).exists()
    # The safety officer reads the record but is offered no export.
    safety = log_in(new_page(), "safety")
    safety.goto(f"{site}/register/people/{person.pk}/")
    safety.get_by_label("Why do you need this record?").fill("Reviewing before the cup tie")
    safety.get_by_role("button", name="Show the record").click()
    expect(safety.locator("[data-person-name]")).to_contain_text("Larkhaven")
    expect(safety.locator("[data-subject-access-form]")).to_have_count(0)
