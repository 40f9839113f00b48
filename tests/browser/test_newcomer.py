"""Issue 27, as a newcomer met it: the whole path from a fresh demo to the cup tie's report, the
control room by keyboard alone, and what was hard to find or to read (each test the path that
failed)."""

import re

import pytest
from playwright.sync_api import Page, expect

from safeground.accounts.models import User
from safeground.casework.services import case_open
from safeground.entry.models import Ticket
from safeground.incidents.services import Place, log_entry_append
from safeground.matches.models import Fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CUP_TIE = "West Ham United v Chelsea, Fourth round"
# A date written any other way than the one formatter's 26/10/2016: "2 Dec 2026", "Wednesday 26
# October 2016", "Wed 26 Oct".
OTHER_DATE = re.compile(
    r"\b\d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* \d{4}\b"
    r"|\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]* \d{1,2} [A-Z][a-z]"
)


def _cup_tie() -> Fixture:
    return Fixture.objects.get(away_club__name="Chelsea", stage="Fourth round")


def _visible_text(page: Page) -> str:
    return page.locator("main").inner_text()


@pytest.mark.demo_history  # as `make run` loads it: the demo season's log before the cup tie too
def test_the_newcomers_path_from_a_fresh_demo_to_the_cup_ties_figures(site, new_page, log_in):
    """Issue 27, done when: a safety officer, following only the links a person would, reads
    the cup tie's night on its report (7 arrests, 30 prevented from attending) and the season's
    23 bans, on a demo loaded as `make run` loads it and nothing else run."""
    page = log_in(new_page(), "safety")
    expect(page).to_have_url(f"{site}/")
    page.get_by_role("link", name=CUP_TIE, exact=True).click()
    expect(page.locator("h1")).to_have_text("West Ham United v Chelsea (26/10/2016)")
    expect(page.locator("main")).to_contain_text("26/10/2016 19:45")
    page.get_by_role("link", name="Post-match report").click()
    expect(page.locator("h1")).to_have_text("Post-match report")
    expect(page.locator('[data-figure="arrests"]')).to_have_text("7")
    expect(page.locator('[data-figure="prevented"]')).to_have_text("30")

    page.get_by_role("link", name="Safeground", exact=True).click()
    page.get_by_role("link", name="London Stadium", exact=True).click()
    page.get_by_role("link", name=re.compile("^Season dashboard")).click()
    expect(page.locator('[data-total="bans-issued"]')).to_have_text("23")
    cup_row = page.locator(f'[data-match="{_cup_tie().pk}"]')
    expect(cup_row).to_contain_text("v Chelsea")
    expect(cup_row.locator("td").nth(3)).to_have_text("7")  # arrests
    expect(cup_row.locator("[data-prevented]")).to_have_text("30")
    cup_row.get_by_role("link", name="Report").click()
    expect(page.locator('[data-figure="arrests"]')).to_have_text("7")


# --- the control room by keyboard alone ----------------------------------------------------------


def _tab_to(page: Page, test: str, *, back: bool = False, limit: int = 80) -> None:
    """Tab (or Shift+Tab) until the focused element passes `test` (a JavaScript function of
    it), checking that every element reached shows where the focus is."""
    for _ in range(limit):
        page.keyboard.press("Shift+Tab" if back else "Tab")
        shown = page.evaluate(
            """() => { const el = document.activeElement; const s = getComputedStyle(el);
                 return { tag: el.tagName, ring: s.outlineStyle !== "none"
                   && parseFloat(s.outlineWidth) > 0 }; }"""
        )
        assert shown["tag"] == "BODY" or shown["ring"], f"no visible focus on {shown['tag']}"
        if page.evaluate(f"({test})(document.activeElement)"):
            return
    raise AssertionError(f"the keyboard never reached {test}")


def test_the_control_room_works_by_keyboard_alone(site, new_page):
    """Issue 27 build 1: open the control room, log an entry, assign it, send a broadcast and
    reach the incidents by block with Tab, Shift+Tab, Enter, Space and the arrow keys only."""
    page = new_page()
    page.goto(f"{site}/login/")
    _tab_to(page, "el => el.name === 'username'")
    page.keyboard.type("loggist")
    page.keyboard.press("Tab")
    page.keyboard.type("matchday-demo")
    page.keyboard.press("Enter")
    expect(page).to_have_url(f"{site}/")
    _tab_to(page, f"el => el.tagName === 'A' && el.textContent.trim() === '{CUP_TIE}'")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{site}/fixtures/{_cup_tie().pk}/")
    _tab_to(page, "el => el.textContent.trim() === 'Open the live log and map'")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{site}/fixtures/{_cup_tie().pk}/control/")
    expect(page.locator("[data-freshness]")).to_contain_text("connected")

    # Log it: the category has the focus; type to pick, Tab, block, Tab, severity, Tab, Enter.
    expect(page.locator("#qe-category")).to_be_focused()
    page.keyboard.type("Missile")
    page.keyboard.press("Tab")
    page.keyboard.type("S-L2")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    page.keyboard.type("Coins thrown from the away end")
    page.keyboard.press("Enter")
    entry = page.locator("[data-log] .entry", has_text="Coins thrown from the away end")
    expect(entry).to_contain_text("Missile thrown")
    seq = entry.locator(".seq").inner_text().lstrip("#")

    # Assign it: choosing a name with the arrow keys sends nothing; the button does.
    _tab_to(page, f"el => el.getAttribute('aria-label') === 'Assign #{seq} to'")
    page.keyboard.press("ArrowDown")
    chosen = page.evaluate("document.activeElement.selectedOptions[0].textContent")
    page.wait_for_timeout(300)
    expect(entry.locator(".entry-meta")).not_to_contain_text("assigned to")
    page.keyboard.press("Tab")
    expect(page.locator(":focus")).to_have_text("Assign")
    page.keyboard.press("Enter")
    assigned = page.locator(f'[data-log] .entry[data-seq="{seq}"] .entry-meta')
    expect(assigned).to_contain_text(f"assigned to {chosen.split(' (')[0]}")
    # The log was drawn again: the keyboard is still on that entry, not back at the top.
    expect(page.locator(f'[data-log] .entry[data-seq="{seq}"] :focus')).to_have_count(1)

    # Post a steward, then broadcast: on to the panels' tabs, the arrow keys between them.
    _tab_to(page, "el => el.getAttribute('role') === 'tab'")
    page.keyboard.press("ArrowLeft")  # from the first tab round to the last, Posts
    expect(page.get_by_role("tab", name="Posts")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_label("Steward", exact=True)).to_be_focused()
    steward = page.evaluate("document.activeElement.selectedOptions[0].textContent")
    _tab_to(page, "el => el.textContent.trim() === 'Post steward'")
    page.keyboard.press("Enter")
    expect(page.locator("[data-post-list]")).to_contain_text(steward.split(" (")[0])
    _tab_to(page, "el => el.getAttribute('role') === 'tab'", back=True)
    page.keyboard.press("ArrowLeft")
    expect(page.get_by_role("tab", name="Broadcasts")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_label("Message", exact=True)).to_be_focused()  # "Hold at the gates"
    _tab_to(page, "el => el.textContent.trim() === 'Send broadcast'")
    page.keyboard.press("Space")
    expect(page.locator("[data-broadcast-error]")).to_have_text("")
    expect(page.locator("[data-broadcast-list] li").first).to_contain_text("Hold at the gates")

    # The incidents by block, the map's text alternative: Shift+Tab back to the skip links.
    page.reload()
    expect(page.locator("[data-freshness]")).to_contain_text("connected")
    _tab_to(page, "el => el.textContent.trim() === 'Incidents by block'", back=True)
    page.keyboard.press("Enter")
    by_block = page.locator("#map-blocks")
    expect(by_block).to_be_focused()
    expect(by_block).to_be_in_viewport()
    expect(by_block.locator("li[data-block]")).to_have_text(
        re.compile(rf"^Block South Lower 2: #{seq} Missile thrown \(S\d\) assigned$")
    )


# --- hard to find or to read ---------------------------------------------------------------------


@pytest.mark.demo_history  # the season's incidents before the cup tie, which its risk weighs
def test_the_risk_page_labels_its_working_and_shows_no_server_path(site, new_page, log_in):
    page = log_in(new_page(), "safety")
    page.goto(f"{site}/fixtures/{_cup_tie().pk}/")
    page.get_by_role("link", name="Every factor, its weight and contribution").click()
    expect(page.locator("h1")).to_have_text("Risk assessment")
    text = _visible_text(page)
    assert "/src/" not in text and "/work/" not in text and ".yaml (" in text
    ground = page.locator('[data-factor="ground_incidents"] td').nth(4)
    expect(ground).to_contain_text("(count) × ")
    expect(ground).to_contain_text("(severity) × ")
    expect(ground).to_contain_text("(category weight) × ")
    expect(ground).to_contain_text("(recency, ")
    assert not re.search(r"\d x \d", text)
    assert not OTHER_DATE.search(text), OTHER_DATE.search(text)


def test_casework_names_a_concourse_entrys_place_and_the_people_by_name(site, new_page, log_in):
    cup = _cup_tie()
    entry = log_entry_append(
        fixture=cup,
        author=User.objects.get(username="loggist"),
        category="disorder",
        text="Scuffle by the south lower bars",
        place=Place(concourse="S-L"),
    )
    officer = User.objects.get(username="banofficer")
    case = case_open(by=officer, fixture=cup, entries=[entry], title="Scuffle at the bars")
    page = log_in(new_page(), "banofficer")
    page.goto(f"{site}/fixtures/{cup.pk}/casework/")
    row = page.locator(f'[data-report="{entry.seq}"]')
    expect(row.locator("[data-place]")).to_have_text("South lower concourse")
    page.get_by_role("link", name=f"Case #{case.pk}: Scuffle at the bars").click()
    expect(page.locator("[data-entries] [data-place]")).to_have_text("South lower concourse")
    expect(page.locator(".meta").first).to_contain_text(f"opened by {officer}")
    expect(page.locator("[data-history] li").first).to_contain_text(f"by {officer}:")
    expect(page.locator("[data-history]")).not_to_contain_text("by banofficer")
    text = _visible_text(page)
    assert not OTHER_DATE.search(text)
    assert re.search(r"opened by Lee Harte \d\d/\d\d/\d{4} \d\d:\d\d", text)


def test_dates_and_numbers_read_one_way_on_every_page(site, new_page, log_in):
    cup = _cup_tie()
    page = log_in(new_page(), "safety")
    for path in (
        "/",
        f"/fixtures/{cup.pk}/",
        f"/fixtures/{cup.pk}/report/",
        f"/fixtures/{cup.pk}/tickets/",
        f"/fixtures/{cup.pk}/plan/",
        f"/fixtures/{cup.pk}/deployment/",
        "/grounds/london-stadium/capacity/",
        "/grounds/london-stadium/season/",
        "/register/",
    ):
        page.goto(f"{site}{path}")
        text = _visible_text(page)
        assert not OTHER_DATE.search(text), (path, OTHER_DATE.search(text))
        assert "per hour" not in text, path
    page.goto(f"{site}/fixtures/{cup.pk}/tickets/")
    tickets = Ticket.objects.filter(fixture=cup).count()
    expect(page.locator("[data-ticket-count]")).to_have_text(
        f"{tickets:,} tickets imported for this match."
    )
    page.goto(f"{site}/grounds/london-stadium/capacity/")
    expect(page.locator("main")).to_contain_text("an hour each")
    assert not re.search(r"\b\d{4,}\b", page.locator("[data-capacity-summary]").inner_text())


def test_a_refused_ticket_file_is_shown_as_an_error(site, new_page, log_in, tmp_path):
    bad = tmp_path / "tickets.csv"
    bad.write_text(
        "barcode,name,date_of_birth,block,row,seat,end\nX1,A Person,1990-01-01,Z-9,A,1,home\n"
    )
    page = log_in(new_page(), "safety")
    page.goto(f"{site}/fixtures/{_cup_tie().pk}/tickets/")
    page.locator('input[type="file"]').set_input_files(str(bad))
    page.get_by_role("button", name="Import the tickets").click()
    box = page.get_by_role("alert").filter(has_text="not imported")
    expect(box).to_have_class(re.compile(r"\berror-box\b"))
    expect(box.get_by_role("heading")).to_have_text("The file was not imported: 1 problem")
    expect(box).to_contain_text("line 2")
    colour = box.evaluate("el => getComputedStyle(el).borderLeftColor")
    assert colour == "rgb(161, 20, 27)", colour


def test_the_season_charts_colour_each_category_apart_and_its_json_downloads(
    site, new_page, log_in
):
    cup = _cup_tie()
    loggist = User.objects.get(username="loggist")
    for category, block in (("missile", "S-L2"), ("disorder", "S-L3"), ("pyrotechnic", "S-L1"),
                            ("arrest", "S-L2"), ("medical", "E-L1")):  # fmt: skip
        log_entry_append(fixture=cup, author=loggist, category=category, text=category,
                         place=Place(block=block))  # fmt: skip
    page = log_in(new_page(), "safety")
    page.goto(f"{site}/grounds/london-stadium/")
    page.get_by_role("link", name=re.compile("^Season dashboard")).click()
    expect(page.locator('canvas[data-chart="chart-incidents"]')).to_have_attribute(
        "data-drawn", re.compile(r"^[1-9]")
    )
    incidents = page.evaluate(
        "JSON.parse(document.getElementById('chart-incidents').textContent).series"
    )
    colours = [s["colour"] for s in incidents]
    assert len(colours) >= 4 and len(set(colours)) == len(colours), incidents
    assert not {s["name"] for s in incidents} & {"Arrest", "Ejection"}
    outcomes = page.evaluate(
        "JSON.parse(document.getElementById('chart-outcomes').textContent).series"
    )
    arrests = sum(next(s for s in outcomes if s["name"] == "Arrests")["values"])
    expect(page.locator('[data-total="arrests"]')).to_have_text(str(arrests))
    assert arrests >= 1  # the one logged above, at least
    with page.expect_download() as download:
        page.get_by_role("link", name="JSON").first.click()
    assert download.value.suggested_filename == "season-london-stadium.json"


def test_the_capacity_working_adds_up_and_lists_blocks_in_natural_order(site, new_page, log_in):
    page = log_in(new_page(), "safety")
    page.goto(f"{site}/grounds/london-stadium/capacity/")
    figures = page.locator("[data-capacity-of] dt")
    checked = 0
    for n in range(figures.count()):
        figure = figures.nth(n)
        value = re.search(r": ([\d,]+)$", figure.text_content().strip())
        if not value:
            continue  # not assessed
        lines = figure.locator("xpath=following-sibling::dd[1]//li").all_text_contents()
        parts = [int(re.search(r"= ([\d,]+)$", line)[1].replace(",", "")) for line in lines]
        assert sum(parts) == int(value[1].replace(",", "")), (figure.text_content(), lines)
        checked += 1
    assert checked > 10
    east = page.locator('[data-capacity-of="E"]').first.text_content()
    lower = [int(n) for n in re.findall(r"East Lower (\d+) vomitory", east)]
    assert lower[:10] == list(range(1, 11)), lower  # the exit capacity's routes, then again
    page.goto(f"{site}/grounds/london-stadium/")
    codes = page.locator("[data-plan] .block").evaluate_all("els => els.map(e => e.dataset.block)")
    east_lower = [c for c in codes if c.startswith("E-L")]
    assert east_lower == [f"E-L{n}" for n in range(1, 11)], east_lower
