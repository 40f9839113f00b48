"""Welsh end to end (issue 27): a steward whose phone asks for Welsh, or who chooses Cymraeg, logs
in, reports with two taps and sees it received, and reads a broadcast, all in Welsh; a turnstile
steward's scanner in Welsh names a refusal in words, online and offline, never by its code. The
ground's own names (the venue file's `names: {cy: ...}`) and the risk category's meaning (the
policy's `meanings`) come in Welsh too, on the pages and in the live frames (issue 38 row 10)."""

import re
from collections.abc import Iterator
from datetime import timedelta

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.utils import timezone
from django.utils.translation import override
from playwright.sync_api import Browser, Page, expect

from safeground.accounts.models import Organisation, User
from safeground.accounts.services import device_create
from safeground.demo.season import DEMO_PASSWORD
from safeground.entry.models import Ticket, TicketFlag
from safeground.entry.runtime import lookups
from safeground.incidents.broadcasting import broadcast_send
from safeground.incidents.models import LogEntry
from safeground.incidents.posts import steward_post_assign
from safeground.incidents.services import Place, log_entry_append
from safeground.matches.models import Fixture
from safeground.supporters.seats import seat_code
from safeground.venues.models import Block
from tests.entry.conftest import flag, make_ticket

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}


@pytest.fixture
def phone(browser: Browser) -> Iterator[Browser]:
    """A phone's browser in a language: `phone("cy")` asks for Welsh (Accept-Language: cy)."""
    contexts = []

    def make(locale: str) -> Page:
        context = browser.new_context(viewport=PHONE, locale=locale)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(10_000)
        return page

    yield make  # type: ignore[misc]
    for context in contexts:
        context.close()


def no_serious_violation(page: Page) -> None:
    found = [
        f"{v['id']} ({v['impact']})"
        for v in Axe().run(page).response["violations"]
        if v["impact"] in ("critical", "serious")
    ]
    assert found == []


def cup_tie() -> Fixture:
    return Fixture.objects.get(away_club__name="Chelsea", stage="Fourth round")


def log_in_in_welsh(page: Page, site: str, username: str) -> None:
    page.goto(f"{site}/login/")
    expect(page.locator("html")).to_have_attribute("lang", "cy")
    expect(page.get_by_role("heading", level=1)).to_have_text("Mewngofnodi")
    page.get_by_label("Enw defnyddiwr").fill(username)
    page.get_by_label("Cyfrinair").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Mewngofnodi").click()
    expect(page.locator("[data-user]")).to_be_visible()


def test_a_steward_whose_phone_asks_for_welsh_reports_and_reads_a_broadcast_in_welsh(
    site, phone
) -> None:
    fixture = cup_tie()
    steward, loggist = (User.objects.get(username=name) for name in ("steward", "loggist"))
    steward_post_assign(fixture=fixture, steward=steward, assigned_by=loggist, zone="away-se-cup")
    page = phone("cy")
    log_in_in_welsh(page, site, "steward")

    page.goto(f"{site}/fixtures/{fixture.pk}/steward/")
    expect(page.locator("html")).to_have_attribute("lang", "cy")
    expect(page.locator("[data-freshness]")).to_contain_text("wedi cysylltu")
    # The post's zone by its Welsh name from the venue file (issue 38 row 10).
    expect(page.locator("[data-post]")).to_have_text("Eich safle: Adran oddi cartref (cwpan)")
    expect(page.get_by_role("group", name="Beth welsoch chi?")).to_be_visible()
    expect(page.locator("[data-outbox-count]")).to_have_text("yn y ciw (0)")
    no_serious_violation(page)

    # Two taps: what (the post is where), then send.
    report = page.locator("[data-report]")
    report.get_by_text("Taflegryn wedi'i daflu", exact=True).click()
    report.get_by_role("button", name="Anfon adroddiad").click()
    expect(page.locator("[data-report-message]")).to_have_text("Wedi'i anfon i'r ystafell reoli.")
    entry = LogEntry.objects.get(kind="report")
    assert entry.category.code == "missile" and entry.zone is not None  # type: ignore[union-attr]
    mine = page.locator(f'[data-sent] li[data-report="{entry.pk}"]')
    expect(mine).to_contain_text("Taflegryn wedi'i daflu · Adran oddi cartref (cwpan)")
    expect(mine).to_contain_text(f"wedi'i gofnodi fel #{entry.seq}")
    expect(mine.locator("[data-report-state]")).to_have_text("wedi dod i law")

    # A broadcast from the control room with its script's words: read in Welsh, acknowledged.
    broadcast_send(fixture=fixture, sent_by=User.objects.get(username="safety"), script="hold")
    dialog = page.locator("[data-broadcast]")
    expect(dialog).to_be_visible()
    expect(dialog.locator("[data-broadcast-text]")).to_have_text("Daliwch wrth y gatiau")
    expect(dialog).to_contain_text("Ystafell reoli")
    dialog.get_by_role("button", name="Cydnabod").click()
    expect(dialog).to_be_hidden()


def test_a_steward_chooses_cymraeg_on_the_login_page_and_english_again_on_their_phone(
    site, phone
) -> None:
    fixture = cup_tie()
    page = phone("en-GB")
    page.goto(f"{site}/login/")
    expect(page.locator("html")).to_have_attribute("lang", "en-gb")
    expect(page.get_by_role("heading", level=1)).to_have_text("Log in")
    page.get_by_role("button", name="Cymraeg").click()
    log_in_in_welsh(page, site, "steward")  # the choice outlives the browser's language

    page.goto(f"{site}/fixtures/{fixture.pk}/steward/")
    expect(page.locator("[data-post]")).to_have_text("Dim safle eto: gofynnwch i'r ystafell reoli")
    expect(page.get_by_role("button", name="Anfon adroddiad")).to_be_visible()

    page.get_by_role("button", name="English").click()
    expect(page).to_have_url(re.compile(rf"/fixtures/{fixture.pk}/steward/$"))
    expect(page.locator("html")).to_have_attribute("lang", "en-gb")
    expect(page.locator("[data-post]")).to_have_text("No post yet: ask the control room")
    expect(page.get_by_role("button", name="Send report")).to_be_visible()


@pytest.fixture
def match_today(site) -> Iterator[Fixture]:
    cup = cup_tie()
    cup.kickoff = timezone.now() + timedelta(hours=1)
    cup.save(update_fields=["kickoff"])
    make_ticket(cup, "AWAY-1", "S-L2", "away")
    banned = make_ticket(cup, "BANNED-1", "S-L2", "away", status=Ticket.Status.CANCELLED)
    flag(banned, TicketFlag.Status.CONFIRMED)
    lookups.caches_clear()  # the server runs in this process: it sees the new kick-off at once
    yield cup
    lookups.caches_clear()


def scan(page: Page, barcode: str) -> None:
    page.get_by_label("Cod bar").fill(barcode)
    page.get_by_label("Cod bar").press("Enter")


def test_the_scanner_in_welsh_names_a_refusal_in_words_online_and_offline(
    match_today, site, phone
) -> None:
    club = Organisation.objects.get(name="West Ham United")
    key = device_create(organisation=club, name="Handheld 1", profile="scanner")[1]
    page = phone("cy")
    page.goto(f"{site}/entry/scanner/")
    expect(page.locator("html")).to_have_attribute("lang", "cy")
    page.get_by_label("Allwedd dyfais").fill(key)
    page.get_by_label("Giât dro").fill("F03")
    page.get_by_role("button", name="Paru a llwytho'r rhestr docynnau").click()
    expect(page.locator("[data-bundle-status]")).to_have_text(
        re.compile(r"^Bwndel ar gyfer West Ham United v Chelsea, yn ddilys tan \d\d:\d\d, \d+ o")
    )
    expect(page.locator("[data-network]")).to_have_text("ar-lein")
    expect(page.locator("[data-scanner]")).to_have_attribute("data-offline-ready", "true")
    no_serious_violation(page)

    box = page.locator("[data-decision]")
    scan(page, "BANNED-1")  # the server decides, in the steward's language
    expect(box).to_have_attribute("data-reason", "banned")
    expect(box.locator("[data-decision-word]")).to_have_text("PEIDIWCH Â GADAEL I MEWN")
    expect(box.locator("[data-decision-reason]")).to_have_text("Wedi'i wahardd")
    expect(box.locator("[data-decision-message]")).to_contain_text("wedi'i wahardd o'r gêm hon")

    page.context.set_offline(True)  # the page decides from its bundle, in the same words
    expect(page.locator("[data-network]")).to_have_text("ALL-LEIN")
    scan(page, "AWAY-1")
    expect(box.locator("[data-decision-word]")).to_have_text("GADEWCH I MEWN")
    expect(box.locator("[data-decision-message]")).to_have_text(
        "Gadewch i mewn: bloc S-L2, rhes C, sedd 12."
    )
    scan(page, "AWAY-1")
    expect(box).to_have_attribute("data-reason", "already_inside")
    expect(box.locator("[data-decision-reason]")).to_have_text("Eisoes y tu mewn")
    expect(box.locator("[data-decision-message]")).to_contain_text(
        "defnyddiwyd y tocyn hwn eisoes gan y sganiwr hwn"
    )
    expect(box.locator("[data-decision-mode]")).to_have_text("ALL-LEIN · yn y ciw (2)")


def test_a_welsh_speaking_loggist_works_the_control_room_in_welsh(site, new_page, log_in) -> None:
    """A staff page through the translation machinery: the loggist chooses Cymraeg, and the
    control room's marked words come in Welsh where the catalogue has them (its headings, tally,
    tabs and quick entry, and the words its script writes), English where it does not yet;
    logging still works, with no script error and nothing axe finds serious."""
    fixture = cup_tie()
    page = log_in(new_page(), "loggist")
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.get_by_role("button", name="Cymraeg").click()
    page.goto(f"{site}/fixtures/{fixture.pk}/control/")
    expect(page.locator("html")).to_have_attribute("lang", "cy")
    expect(page.get_by_role("heading", level=1)).to_have_text(
        "West Ham v Chelsea (26/10/2016) · log byw"
    )
    expect(page.locator("[data-tally] dt").first).to_have_text("Arestiadau")
    expect(page.get_by_role("tab", name="Negeseuon i bawb")).to_be_visible()
    expect(page.get_by_role("button", name="Cofnodi")).to_be_visible()
    # The script's words come from the page's config, in the page's language.
    expect(page.locator("[data-freshness]")).to_contain_text("wedi cysylltu")

    page.locator("#qe-category").select_option("missile")
    expect(page.locator("#qe-category option:checked")).to_have_text("Taflegryn wedi'i daflu")
    page.get_by_role("combobox", name="Bloc").fill("S-L2")
    page.get_by_label("Beth a welwyd").fill("Coins thrown at home fans from the away end")
    page.get_by_label("Beth a welwyd").press("Enter")
    expect(page.locator("[data-log] .entry[data-incident]")).to_contain_text("Coins thrown")
    expect(page.locator("[data-log] .entry[data-incident] .status")).to_have_text("ar agor")
    assert LogEntry.objects.get(kind="report").text.startswith("Coins thrown")
    no_serious_violation(page)
    assert errors == []


def test_a_welsh_speaking_safety_officer_sees_the_grounds_names_and_the_risk_in_welsh(
    site, new_page, log_in
) -> None:
    fixture = cup_tie()
    page = log_in(new_page(), "safety")
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.locator("[data-language-switch]").get_by_role("button", name="Cymraeg").click()

    page.goto(f"{site}/fixtures/{fixture.pk}/control/")
    expect(page.locator("html")).to_have_attribute("lang", "cy")
    expect(page.locator("[data-freshness]")).to_contain_text("wedi cysylltu")
    zones = page.locator("[data-filters] select[name=zone] option")
    expect(zones).to_contain_text(["Eisteddle'r Gogledd (cartref)"])
    expect(zones).to_contain_text(["Adran oddi cartref (cwpan)"])
    expect(page.locator("[data-filters]")).not_to_contain_text("Away section")

    # A report at the away section, logged by someone reading English, arrives live: this
    # screen shows its place in Welsh, while the log keeps the venue file's English.
    with override("en-gb"):
        entry = log_entry_append(
            fixture=fixture,
            author=User.objects.get(username="loggist"),
            category="missile",
            text="Coins thrown at the home fans",
            place=Place(zone="away-se-cup"),
        )
    logged = page.locator(f'[data-log] .entry[data-seq="{entry.seq}"] .place')
    expect(logged).to_have_text("Adran oddi cartref (cwpan)")

    page.goto(f"{site}/fixtures/{fixture.pk}/risk/")
    # Without the season's history before it the tie is B (the police grading stays as it is).
    expect(page.locator("[data-risk-category]")).to_have_text("B")
    expect(page.locator("[data-risk-meaning]")).to_have_text("Peth risg o anhrefn")
    no_serious_violation(page)
    assert errors == []


def test_a_supporters_seat_page_in_welsh_names_the_stand_in_welsh(site, phone) -> None:
    block = Block.objects.get(code="E-L1", ground__code="london-stadium")
    page = phone("cy")
    page.goto(f"{site}/s/{seat_code(block, 'A', 1)}/")
    expect(page.locator("html")).to_have_attribute("lang", "cy")
    expect(page.locator("[data-seat]")).to_contain_text("Eisteddle'r Dwyrain")
    expect(page.locator("[data-seat]")).not_to_contain_text("East Stand")
