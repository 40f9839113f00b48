"""A major incident declared in JESIP's words (issue 41, item 3): the safety officer declares it
from the control room with its M/ETHANE report on a tablet, every control-room screen shows the
banner (live, without a reload), the page shows the report as it stands; a correction of one part
strikes the old words through with who, when and why. On a phone the page never scrolls sideways,
and it reads in Welsh."""

import pytest
from playwright.sync_api import Page, expect

from safeground.accounts.models import User
from safeground.decisions.models import MethaneReport
from safeground.matches.models import Fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TABLET = {"width": 820, "height": 1180}
PHONE = {"width": 390, "height": 844}


def cup_tie() -> Fixture:
    return Fixture.objects.get(away_club__name="Chelsea", stage="Fourth round")


def no_sideways_scroll(page: Page) -> None:
    width = page.evaluate("document.scrollingElement.scrollWidth")
    assert width <= PHONE["width"], width


def test_the_safety_officer_declares_a_major_incident_and_corrects_one_part(
    site, new_page, log_in
) -> None:
    fixture = cup_tie()
    room = log_in(new_page(), "loggist")  # another control-room screen, open before it
    room.goto(f"{site}/fixtures/{fixture.pk}/control/")
    expect(room.locator("[data-freshness]")).to_contain_text("connected")
    expect(room.locator("[data-major-incident-banner]")).to_have_count(0)
    # The loggist records decisions, but a commander declares: no button for them.
    expect(room.locator("[data-decisions-strip]")).to_be_visible()
    expect(room.locator("[data-declare-major-incident]")).to_have_count(0)

    tablet = log_in(new_page(TABLET), "safety")
    tablet.goto(f"{site}/fixtures/{fixture.pk}/control/")
    tablet.get_by_role("link", name="Declare major incident").click()
    form = tablet.locator("[data-methane-form]")
    expect(form.get_by_label("Major incident declared")).to_have_value(
        "Yes: major incident declared"
    )
    # A required part left empty: refused, the part named, nothing declared.
    form.get_by_label("Type of incident").fill("Crush at the front of the lower tier")
    form.get_by_role("button", name="Declare major incident").click()
    expect(tablet.locator("[data-methane-form]")).to_contain_text("This field is required")
    assert not MethaneReport.objects.exists()

    form = tablet.locator("[data-methane-form]")
    # The ground's places are offered for the exact location.
    assert tablet.locator("#methane-places option").count() > 0
    form.get_by_label("Exact location").fill("South stand, lower tier, S-L2")
    form.get_by_label("Hazards").fill("Barrier failed; crowd still pressing")
    form.get_by_label("Access").fill("Gate 4 from Mill Lane; RVP north car park")
    form.get_by_label("Number of casualties").fill("About 12, 3 serious")
    form.get_by_label("Emergency services").fill("Police, ambulance here; fire required")
    form.get_by_role("button", name="Declare major incident").click()

    latest = tablet.locator("[data-methane-latest]")
    expect(latest).to_contain_text("Major incident declared")
    expect(latest.locator("[data-part='exact_location']")).to_have_text(
        "South stand, lower tier, S-L2"
    )
    expect(latest.locator("[data-part='casualties']")).to_contain_text("About 12, 3 serious")
    report = MethaneReport.objects.get()
    assert report.made_by.username == "safety" and report.entry.kind == "major_incident"

    # Every control-room screen shows it, live: the loggist's did not reload.
    banner = room.locator("[data-major-incident-banner]")
    expect(banner).to_contain_text("Major incident declared")
    expect(banner).to_contain_text("South stand, lower tier, S-L2")
    banner.get_by_role("link", name="M/ETHANE report").click()
    expect(room.locator("[data-methane-latest]")).to_contain_text("Barrier failed")
    expect(room.locator("[data-methane-correct]")).to_have_count(0)  # the loggist may not

    # One part corrected: the new words stand, the old struck through with who, when, why.
    tablet.locator("[data-methane-correct]").click()
    form = tablet.locator("[data-methane-form]")
    expect(form.get_by_label("Exact location")).to_have_value("South stand, lower tier, S-L2")
    form.get_by_label("Number of casualties").fill("15, 4 serious")
    form.get_by_label("Why it is corrected").fill("Ambulance recount")
    form.get_by_role("button", name="Log the correction").click()

    casualties = tablet.locator("[data-methane-latest] [data-part='casualties']")
    expect(casualties.locator("[data-now]")).to_have_text("15, 4 serious")
    expect(casualties.locator("del[data-was]")).to_have_text("About 12, 3 serious")
    expect(casualties).to_contain_text(f"corrected by {User.objects.get(username='safety')}")
    expect(casualties).to_contain_text("Ambulance recount")
    old = tablet.locator(f"#methane-{report.entry.seq}")
    expect(old.locator("[data-part='casualties'] del[data-struck]")).to_have_text(
        "About 12, 3 serious"
    )
    expect(old.locator("[data-part='hazards'] del")).to_have_count(0)  # unchanged: not struck
    assert MethaneReport.objects.count() == 2

    # Linked from the decision log.
    room.goto(f"{site}/fixtures/{fixture.pk}/decisions/")
    room.locator("[data-major-incident-link]").click()
    expect(room.locator("[data-methane-latest] [data-part='casualties'] [data-now]")).to_have_text(
        "15, 4 serious"
    )


def test_on_a_phone_the_page_and_the_form_never_scroll_sideways(site, new_page, log_in) -> None:
    fixture = cup_tie()
    phone = log_in(new_page(PHONE), "police")
    phone.goto(f"{site}/fixtures/{fixture.pk}/major-incident/declare/")
    no_sideways_scroll(phone)
    form = phone.locator("[data-methane-form]")
    form.get_by_label("Exact location").fill("Away end concourse, behind block " + "S" * 60)
    form.get_by_label("Type of incident").fill("Fire in a food kiosk")
    form.get_by_role("button", name="Declare major incident").click()
    expect(phone.locator("[data-methane-latest]")).to_contain_text("Fire in a food kiosk")
    no_sideways_scroll(phone)
    phone.locator("[data-methane-correct]").click()
    phone.locator("[data-methane-form]").get_by_label("Hazards").fill("Smoke in the concourse")
    phone.locator("[data-methane-form]").get_by_label("Why it is corrected").fill("Seen on CCTV")
    phone.locator("[data-methane-form]").get_by_role("button", name="Log the correction").click()
    expect(phone.locator("[data-methane-history] article")).to_have_count(2)
    no_sideways_scroll(phone)


def test_the_page_in_welsh(site, new_page, log_in) -> None:
    fixture = cup_tie()
    page = log_in(new_page(PHONE), "safety")
    page.locator("[data-language-switch]").get_by_role("button", name="Cymraeg").click()
    page.goto(f"{site}/fixtures/{fixture.pk}/control/")
    expect(page.locator("html")).to_have_attribute("lang", "cy")
    page.get_by_role("link", name="Datgan digwyddiad mawr").click()
    form = page.locator("[data-methane-form]")
    expect(form.get_by_label("Datganwyd digwyddiad mawr")).to_have_value(
        "Ie: datganwyd digwyddiad mawr"
    )
    form.get_by_label("Union leoliad").fill("Eisteddle'r de")
    form.get_by_label("Math o ddigwyddiad").fill("Gwasgfa")
    form.get_by_role("button", name="Datgan digwyddiad mawr").click()
    latest = page.locator("[data-methane-latest]")
    expect(latest.get_by_role("heading", name="Datganwyd digwyddiad mawr")).to_be_visible()
    expect(latest).to_contain_text("Nifer yr anafusion")
    expect(page.get_by_role("heading", name="Hanes")).to_be_visible()
    no_sideways_scroll(page)


def test_a_major_incident_declared_then_a_stand_closed_and_counted_out(
    site, new_page, log_in
) -> None:
    """Issue 41's done-when: declare a major incident with M/ETHANE, close a stand from its page,
    and see the count of those still inside fall as the turnstiles scan them out."""
    from tests import factories
    from tests.browser.test_stand_evacuation import cup_tie as gates_open
    from tests.browser.test_stand_evacuation import post, turnstiles

    fixture = gates_open()
    post(fixture, "steward", zone="home-west")
    for n in range(2):
        factories.ticket(fixture, block="W-L4", barcode=f"MI-WEST-{n}")
    scan = turnstiles(site)
    for n in range(2):
        scan(f"MI-WEST-{n}", "I01", "in")

    safety = log_in(new_page(TABLET), "safety")
    safety.goto(f"{site}/fixtures/{fixture.pk}/major-incident/declare/")
    form = safety.locator("[data-methane-form]")
    form.get_by_label("Exact location").fill("West Stand, lower tier, W-L4 concourse")
    form.get_by_label("Type of incident").fill("Smoke on the concourse")
    form.get_by_role("button", name="Declare major incident").click()
    expect(safety.locator("[data-methane-latest]")).to_contain_text("Smoke on the concourse")

    # From the report: the West Stand closed and evacuated, with its exits and who is inside.
    stands = safety.locator("[data-methane-stands]")
    stands.locator('[data-stand="W"]').get_by_role("link", name="Close stand / evacuate").click()
    expect(safety.locator("[data-exits]")).to_contain_text("West Lower 4 vomitory")
    expect(safety.locator("[data-still-inside]")).to_have_text("2")
    safety.get_by_label("Why (logged with the decision)").fill("Major incident: smoke at W-L4")
    safety.get_by_role("button", name="Confirm: close and evacuate").click()
    expect(safety.locator("[data-stand-closed]")).to_contain_text("West Stand closed at")

    scan("MI-WEST-0", "I01", "out")
    expect(safety.locator("[data-still-inside]")).to_have_text("1", timeout=15_000)
    scan("MI-WEST-1", "I02", "out")
    expect(safety.locator("[data-still-inside]")).to_have_text("0", timeout=15_000)
    assert MethaneReport.objects.count() == 1
