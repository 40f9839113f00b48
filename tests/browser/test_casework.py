"""Identify and sanction in a browser, on the demo season: a missile entry in an away block of the
cup tie; the ban officer opens a case, looks up who was there, identifies a ticket holder with a
CCTV still as evidence and proposes a life ban; the safety officer approves it; at the next
fixture the holder's ticket is flagged, the ban officer confirms it, and the turnstile denies the
ticket with reason `banned`."""

import hashlib
import json
import re
import urllib.request
import uuid
from datetime import UTC, date, datetime
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone
from playwright.sync_api import expect

from safeground.accounts.models import Organisation, User
from safeground.accounts.services import device_create
from safeground.bans.models import AccessRecord, Ban, Person
from safeground.casework.evidence import evidence_add
from safeground.casework.models import Case, CustodyRecord, Evidence
from safeground.casework.services import case_close
from safeground.demo.season import HOME_ORG, rerun_load
from safeground.entry.models import Ticket, TicketFlag
from safeground.incidents.models import Photo
from safeground.incidents.photos import log_entry_photo_add
from safeground.incidents.services import Place, log_entry_append
from safeground.matches.models import Fixture
from tests import factories
from tests.browser.test_accessibility import _serious

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _unknown_away_holder(cup_tie: Fixture) -> Ticket:
    """An away ticket of the cup tie whose holder is on nobody's register (not a planted name)."""
    known = {p.full_name for p in Person.objects.all()}
    return next(
        t
        for t in Ticket.objects.filter(fixture=cup_tie, end="away").order_by("barcode")
        if t.holder_name not in known
    )


def _scan(site: str, key: str, barcode: str) -> dict:
    body = {
        "barcode": barcode,
        "turnstile": "F03",
        "scanned_at": timezone.now().isoformat(),
        "nonce": str(uuid.uuid4()),
    }
    request = urllib.request.Request(
        f"{site}/api/entry/scan",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "X-Device-Key": key},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def test_from_a_missile_entry_to_a_banned_holder_turned_away_at_the_next_fixture(
    site, new_page, log_in
):
    cup_tie = Fixture.objects.get(away_club__name="Chelsea", stage="Fourth round")
    target = _unknown_away_holder(cup_tie)
    entry = log_entry_append(
        fixture=cup_tie,
        author=User.objects.get(username="loggist"),
        category="missile",
        text="Coins thrown at the stewards from the away section",
        place=Place(block=target.block.code, first_row=target.row),
    )
    next_fixture = rerun_load()  # the cup tie played again today: the same holders
    their_next_ticket = Ticket.objects.get(
        fixture=next_fixture, holder_name=target.holder_name, holder_dob=target.holder_dob
    )

    # The ban officer opens a case from the entry.
    officer = log_in(new_page(), "banofficer")
    officer.goto(f"{site}/fixtures/{cup_tie.pk}/")
    officer.get_by_role("link", name="Cases and evidence").click()
    officer.get_by_label(f"Entry #{entry.seq}").check()
    officer.get_by_label("Title").fill("Coins thrown from the away section")
    officer.get_by_role("button", name="Open a case").click()
    expect(officer.locator("h1")).to_contain_text("Coins thrown from the away section")
    case = Case.objects.get()

    # Who was there: narrow first (the entry's own row), the count, a stated reason, then the
    # names, with whether each went in.
    identify_before = AccessRecord.objects.filter(action="identify").count()
    officer.get_by_role("link", name="Who was there?").click()
    expect(officer.locator("[data-areas]")).to_have_text(f"{target.block.code}, row {target.row}")
    officer.get_by_label("Why do you need the names?").fill("Identify the coin thrower")
    officer.get_by_role("button", name="Show the names").click()
    row = officer.locator("[data-holders] tr", has_text=target.holder_name)
    expect(row.locator("[data-entered]")).to_have_text("not scanned in")
    assert AccessRecord.objects.filter(action="identify").count() == identify_before + 1
    row.get_by_role("button", name=f"Identify {target.holder_name}").click()
    expect(officer.locator("[data-subjects]")).to_contain_text(target.holder_name)

    # The outcome's kind is named by its label (axe: `select-name`).
    outcome = officer.locator("[data-outcome-form]").get_by_label("Outcome", exact=True)
    expect(outcome).to_have_count(1)
    assert outcome.evaluate("e => e.tagName") == "SELECT"

    # A CCTV still as evidence of the holder: its SHA-256 is shown.
    officer.locator("[data-evidence-details] summary").click()
    form = officer.locator("[data-evidence-form]")
    form.get_by_label("Kind of evidence").select_option("photo")
    form.get_by_label("File").set_input_files(
        files=[{"name": "cctv-still-cam12.png", "mimeType": "image/png", "buffer": factories.PNG}]
    )
    form.get_by_label("What it shows").fill("CCTV still, camera 12, 20:31:05")
    form.get_by_label("Of subject").select_option(label=f"{target.holder_name} ({target.place})")
    form.get_by_role("button", name="Add the evidence").click()
    sha256 = hashlib.sha256(factories.PNG).hexdigest()
    expect(officer.locator("[data-evidence] [data-sha256]")).to_have_text(sha256)
    still = Evidence.objects.get(case=case)
    assert still.subject is not None and still.subject.ticket_id == target.pk

    # A life ban proposed from the case, into the register's approval flow.
    officer.locator("[data-ban-form] summary").click()
    officer.get_by_label("Life ban").check()
    officer.get_by_label("Grounds").fill("Threw coins at the stewards; identified on CCTV.")
    officer.get_by_role("button", name="Propose the ban").click()
    expect(officer.locator(".message")).to_contain_text("proposed")
    ban = Ban.objects.get(status="proposed", person__last_name=target.holder_name.split()[-1])
    assert ban.is_life and f"log entry #{entry.seq}" in ban.grounds and entry.hash in ban.grounds

    # Another user approves it in the register: in force from today.
    safety = log_in(new_page(), "safety")
    safety.goto(f"{site}/register/")
    safety.get_by_role("link", name=f"Review ban #{ban.pk}").click()
    safety.get_by_label("Why do you need this record?").fill("Approving a ban from case")
    safety.get_by_role("button", name="Show the record").click()
    safety.get_by_label("Your reason").fill("CCTV still reviewed; a life ban is proportionate")
    safety.get_by_role("button", name=f"Approve ban #{ban.pk}").click()
    expect(safety.locator("[data-ban-status]")).to_have_text("Active")

    # The next fixture's ticket of that holder was flagged; the ban officer confirms it.
    flag = TicketFlag.objects.get(ticket=their_next_ticket, ban=ban)
    officer.goto(f"{site}/register/flags/{flag.pk}/")
    officer.get_by_label("Why do you need this record?").fill("Flag from a case ban")
    officer.get_by_role("button", name="Show the record").click()
    officer.get_by_label("Your note").fill("Same person as on the CCTV still")
    officer.get_by_role("button", name=re.compile("^Confirm")).click()
    expect(officer.locator(".message")).to_contain_text("confirmed")

    # At the turnstile of the next fixture: denied, banned.
    _, key = device_create(
        organisation=Organisation.objects.get(name=HOME_ORG),
        name="Gate F turnstile 3",
        profile="turnstile",
    )
    answer = _scan(site, key, their_next_ticket.barcode)
    assert (answer["decision"], answer["reason"]) == ("deny", "banned")


def test_a_steward_cannot_look_up_who_was_there_and_the_look_up_is_recorded_for_others(
    site, new_page, log_in
):
    cup_tie = Fixture.objects.get(away_club__name="Chelsea", stage="Fourth round")
    target = Ticket.objects.filter(fixture=cup_tie, end="away").order_by("barcode").first()
    assert target is not None
    entry = log_entry_append(
        fixture=cup_tie,
        author=User.objects.get(username="loggist"),
        category="missile",
        text="Bottle thrown",
        place=Place(block=target.block.code),
    )
    case = factories.case(cup_tie, entries=[entry], by=User.objects.get(username="banofficer"))
    steward = log_in(new_page(), "steward")
    for path in [f"/cases/{case.pk}/who-was-there/", f"/fixtures/{cup_tie.pk}/casework/"]:
        response = steward.goto(f"{site}{path}")
        assert response is not None and response.status == 403
    police = log_in(new_page(), "police")
    police.goto(f"{site}/cases/{case.pk}/who-was-there/")
    police.get_by_label("Why do you need the names?").fill("Arrest enquiry for the bottle")
    police.get_by_role("button", name="Show the names").click()
    expect(police.locator("[data-holders] [data-name]").first).to_have_text(target.holder_name)
    record = AccessRecord.objects.filter(action="identify").latest("pk")
    assert (record.username, record.reason) == ("police", "Arrest enquiry for the bottle")
    assert not CustodyRecord.objects.exists()  # no file was opened


def test_who_was_there_starts_narrow_counts_first_and_asks_again_before_widening(
    site, new_page, log_in, settings
):
    """Issue 27: one row either side of a row-less entry, adjacent blocks ticked by default,
    gave four blocks and 3,290 names on one page. Now: the entry's own block, its count before
    any name; a wider search counted, said to be large, confirmed, then named 100 a page, each
    page recorded as a large look-up."""
    cup_tie = Fixture.objects.get(away_club__name="Chelsea", stage="Fourth round")
    target = Ticket.objects.filter(fixture=cup_tie, end="away").order_by("barcode").first()
    assert target is not None
    entry = log_entry_append(
        fixture=cup_tie,
        author=User.objects.get(username="loggist"),
        category="missile",
        text="Bottle thrown",
        place=Place(block=target.block.code),  # no row: the whole block
    )
    case = factories.case(cup_tie, entries=[entry], by=User.objects.get(username="banofficer"))
    # The browser tests' demo sells a few seats a block: more, for two pages of names.
    factories.tickets(cup_tie, 150, block=target.block.code, prefix="WIDE")
    in_block = Ticket.objects.filter(fixture=cup_tie, block=target.block).count()
    settings.SAFEGROUND_WHO_LARGE = in_block  # the block alone is not large; wider is
    records_before = AccessRecord.objects.count()

    police = log_in(new_page(), "police")
    police.goto(f"{site}/cases/{case.pk}/who-was-there/")
    expect(police.locator("[data-areas]")).to_have_text(f"{target.block.code}, every row")
    expect(police.locator("[data-people]")).to_contain_text(f"{in_block:,} people")
    expect(police.get_by_label("Include adjacent blocks")).not_to_be_checked()
    expect(police.get_by_label("Rows either side")).to_have_value("0")
    expect(police.locator("[data-holders]")).to_have_count(0)  # no name before the names step
    expect(police.locator("[data-large]")).to_have_count(0)

    # Widened: adjacent blocks; counted, said to be large, asked again.
    police.get_by_label("Include adjacent blocks").check()
    police.get_by_role("button", name="Count the people").click()
    expect(police.locator("[data-areas]")).to_contain_text("(adjacent)")
    wide = int(police.locator("[data-people] strong").inner_text().split()[0].replace(",", ""))
    assert wide > in_block
    expect(police.locator("[data-large]")).to_contain_text("A large look-up")
    expect(police.locator("[data-wide]")).to_contain_text("wider search")
    assert not _serious(police, "who was there (wider, asked again)")
    police.get_by_label("Why do you need the names?").fill("Arrest enquiry for the bottle")
    police.get_by_role("button", name="Show the names").click()
    expect(police.locator(".errorlist")).to_contain_text("confirm you need it")
    assert AccessRecord.objects.count() == records_before  # refused: nobody named, no record
    police.get_by_label("Yes, I need the wider search").check()
    police.get_by_label("Why do you need the names?").fill("Arrest enquiry for the bottle")
    police.get_by_role("button", name="Show the names").click()
    expect(police.locator("[data-holders] tbody tr")).to_have_count(100)
    expect(police.locator("[data-summary]")).to_contain_text(f"{wide:,} ticket holders")
    assert not _serious(police, "who was there (a page of names)")
    first_page = police.locator("[data-holders] [data-name]").first.inner_text()
    police.get_by_role("button", name="Next 100").click()
    expect(police.locator("[data-summary]")).to_contain_text(f"101 to {min(wide, 200)}")
    expect(police.locator("[data-holders] [data-name]").first).not_to_have_text(first_page)
    records = list(AccessRecord.objects.filter(pk__gt=0).order_by("pk"))[-2:]
    assert [r.action for r in records] == ["identify_large", "identify_large"]
    assert AccessRecord.objects.count() == records_before + 2
    assert "page 2 of" in records[1].detail and f"{wide} holders" in records[1].detail


def test_a_file_erased_by_retention_shows_its_name_date_and_hash_with_no_link_and_answers_410(
    site, new_page, log_in, monkeypatch
):
    """A closed case's CCTV still goes when retention runs six years on; a screenshot on the
    same log entry stays, held by another open case on that entry. The run is at 00:30 on a
    summer night in London (23:30 UTC the day before): the date a person reads is London's."""
    cup_tie = Fixture.objects.get(away_club__name="Chelsea", stage="Fourth round")
    banofficer = User.objects.get(username="banofficer")
    entry = log_entry_append(
        fixture=cup_tie,
        author=User.objects.get(username="loggist"),
        category="missile",
        text="Coins thrown at the stewards from the away section",
        place=Place(block="S-L2"),
    )
    case = factories.case(cup_tie, entries=[entry], by=banofficer)
    still = factories.evidence(case, upload=factories.upload("cctv-still-cam12.png"))
    police_case = factories.case(cup_tie, entries=[entry], by=banofficer, title="Police enquiry")
    post = evidence_add(
        by=User.objects.get(username="safety"),
        fixture=cup_tie,
        entry=entry,
        kind="screenshot",
        upload=factories.upload("social-post.png", factories.PNG + b"post"),
    )
    # Stewards' photos: one on the entry the police case holds, one on an entry with no case.
    steward = User.objects.get(username="steward")
    kept_photo = log_entry_photo_add(
        entry=entry, author=steward, upload=factories.upload("held.png", factories.PNG + b"held")
    )
    lone_entry = log_entry_append(
        fixture=cup_tie,
        author=steward,
        category="medical",
        text="Supporter fainted on the concourse",
        place=Place(block="S-L2"),
    )
    lone_photo = log_entry_photo_add(entry=lone_entry, author=steward, upload=factories.upload())
    case_close(case=case, by=banofficer, reason="No further action by the police.")

    # The operator's retention run, long after the case closed, while the police case is open.
    run_at = datetime(2033, 7, 14, 23, 30, tzinfo=UTC)  # 00:30 BST on 15 July 2033
    assert timezone.localdate(run_at) == date(2033, 7, 15)
    monkeypatch.setattr(timezone, "now", lambda: run_at)
    out = StringIO()
    call_command("apply_retention", today="2033-07-15", stdout=out)
    monkeypatch.undo()
    assert "1 evidence files erased, 1 held by an open case" in out.getvalue()
    still, post = Evidence.objects.get(pk=still.pk), Evidence.objects.get(pk=post.pk)
    assert still.erased_at == run_at and not still.file
    assert post.erased_at is None and Case.objects.get(pk=police_case.pk).status == "open"
    kept_photo, lone_photo = (
        Photo.objects.get(pk=kept_photo.pk),
        Photo.objects.get(pk=lone_photo.pk),
    )
    assert kept_photo.erased_at is None and lone_photo.erased_at == run_at
    erased_line = "cctv-still-cam12.png (file erased by retention on 15/07/2033; SHA-256 kept)"

    # The ban officer opens the closed case: the still's name, its erasure and hash, no link.
    officer = log_in(new_page(), "banofficer")
    officer.goto(f"{site}/cases/{case.pk}/")
    row = officer.locator(f'[data-evidence-item="{still.pk}"]')
    expect(row).to_contain_text(erased_line)
    expect(row.locator("[data-sha256]")).to_have_text(still.sha256)
    expect(row.get_by_role("link")).to_have_count(0)
    held = officer.locator(f'[data-evidence-item="{post.pk}"]')
    expect(held).not_to_contain_text("erased")
    expect(officer.locator("[data-case-photos]").get_by_role("link")).to_have_count(1)  # held
    with officer.expect_response(f"**/evidence/{post.pk}/") as opened:
        held.get_by_role("link", name="social-post.png").click()
    assert opened.value.status == 200 and opened.value.headers["content-type"] == "image/png"
    assert opened.value.body() == factories.PNG + b"post"

    # The evidence locker of the match says the same.
    officer.goto(f"{site}/fixtures/{cup_tie.pk}/evidence/")
    row = officer.locator(f'[data-evidence-item="{still.pk}"]')
    expect(row).to_contain_text(erased_line)
    expect(row).to_contain_text(still.sha256)
    expect(row.get_by_role("link")).to_have_text([f"case #{case.pk}"])  # the case, no file
    held = officer.locator(f'[data-evidence-item="{post.pk}"]')
    expect(held.get_by_role("link")).to_have_text(["social-post.png", "download"])
    with officer.expect_response(f"**/evidence/{post.pk}/") as opened:
        held.get_by_role("link", name="social-post.png").click()
    assert opened.value.status == 200 and opened.value.body() == factories.PNG + b"post"
    # The stewards' photos: the held one opens, the erased one says so and has no link.
    officer.goto(f"{site}/fixtures/{cup_tie.pk}/evidence/")
    erased_photo = officer.locator(f'[data-photo="{lone_photo.pk}"]')
    expect(erased_photo).to_contain_text("file erased by retention on 15/07/2033; SHA-256 kept")
    expect(erased_photo).to_contain_text(lone_photo.sha256)
    expect(erased_photo.get_by_role("link")).to_have_count(0)
    kept_row = officer.locator(f'[data-photo="{kept_photo.pk}"]')
    expect(kept_row.get_by_role("link")).to_have_text(["view", "download"])
    with officer.expect_response(f"**/photos/{kept_photo.pk}/") as opened:
        kept_row.get_by_role("link", name="view").click()
    assert opened.value.status == 200 and opened.value.body() == factories.PNG + b"held"

    # The still's old address, from a bookmark: 410, and why, in words.
    response = officer.goto(f"{site}/evidence/{still.pk}/")
    assert response is not None and response.status == 410
    expect(officer.locator("body")).to_have_text(
        f"evidence: evidence #{still.pk} was erased by retention on 15/07/2033; "
        f"its SHA-256 {still.sha256} is kept"
    )
    actions = CustodyRecord.objects.filter(evidence=still).values_list("action", flat=True)
    assert sorted(actions) == ["destroy", "upload"]  # the refused visit viewed nothing
    assert CustodyRecord.objects.filter(evidence=post, action="view").count() == 2


def _arrests_of(page, club: str) -> int:
    row = page.locator("[data-arrests-by-club] tr", has_text=club)
    return int(row.locator("td.num").inner_text()) if row.count() else 0


def test_the_safety_officer_records_an_arrest_from_its_log_entry_in_one_form(
    site, new_page, log_in
):
    """Issue 27: an "Arrest" entry with no one identified yet and no offence in the log; one
    form records it, with the away club, and the season's arrests by club counts it."""
    cup_tie = Fixture.objects.get(away_club__name="Chelsea", stage="Fourth round")
    entry = log_entry_append(
        fixture=cup_tie,
        author=User.objects.get(username="loggist"),
        category="arrest",
        text="Police detain a supporter who ran onto the pitch",
        place=Place(block="S-L2"),
    )
    safety = log_in(new_page(), "safety")
    safety.goto(f"{site}/grounds/{cup_tie.ground.code}/season/")
    before = _arrests_of(safety, "Chelsea")

    safety.goto(f"{site}/fixtures/{cup_tie.pk}/")
    safety.get_by_role("link", name="Cases and evidence").click()
    safety.get_by_role("link", name=f"Record an arrest from entry #{entry.seq}").click()
    expect(safety.locator("[data-entry]")).to_contain_text("ran onto the pitch")
    form = safety.locator("[data-arrest-form]")
    # The defaults read from the entry's words and the force policing the match.
    expect(form.get_by_label("Offence group (Home Office)")).to_have_value("pitch_incursion")
    expect(form.get_by_label("Arresting force")).to_have_value("Metropolitan Police Service")
    form.get_by_label("Away club").check()
    # A missing reference is a form error beside its field; nothing is written.
    form.get_by_role("button", name="Record the arrest").click()
    expect(safety.locator('[data-error="reference"]')).to_be_visible()
    assert not Case.objects.filter(entries=entry).exists()
    form = safety.locator("[data-arrest-form]")
    expect(form.get_by_label("Away club")).to_be_checked()
    form.get_by_label("Police reference").fill("RC/2016/0427")
    form.get_by_role("button", name="Record the arrest").click()

    expect(safety.locator(".message")).to_contain_text("Arrest recorded")
    arrest = safety.locator('[data-outcomes] [data-outcome="arrest"]')
    expect(arrest).to_contain_text("Pitch incursion")
    expect(arrest).to_contain_text("club: away club")
    expect(arrest).to_contain_text("RC/2016/0427")

    safety.goto(f"{site}/grounds/{cup_tie.ground.code}/season/")
    assert _arrests_of(safety, "Chelsea") == before + 1

    # The same entry's form again: it names the arrest already recorded; a second is confirmed.
    safety.goto(f"{site}/fixtures/{cup_tie.pk}/casework/entries/{entry.pk}/arrest/")
    expect(safety.locator("[data-arrest-already]")).to_contain_text("ref. RC/2016/0427")
    form = safety.locator("[data-arrest-form]")
    form.get_by_label("Police reference").fill("RC/2016/0428")
    form.get_by_role("button", name="Record the arrest").click()
    expect(safety.locator('[data-error="another"]')).to_be_visible()
    form = safety.locator("[data-arrest-form]")
    form.get_by_label("Record another arrest from this entry").check()
    form.get_by_role("button", name="Record the arrest").click()
    expect(safety.locator(".message")).to_contain_text("Arrest recorded")
    expect(safety.locator('[data-outcomes] [data-outcome="arrest"]')).to_have_count(2)
