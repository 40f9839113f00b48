"""Issue 41's walk: a gate under pressure from its first denials to the warning, a hold at the
gates broadcast acknowledged, and a kick-off delay recorded. The safety officer has the control
room's Gates tab open while Gate F's turnstiles turn forged tickets away through the turnstile
API; the forgeries jump, the gate warning shows on the Gates tab with its causes and figures and
in the log (told once, as a flashpoint warning is); the officer holds the away supporters at the
gates, the steward at Gate F acknowledges on their phone and the control room sees it; the
kick-off is put back by a decision, and the match's clock on the pages gives the new time."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from safeground.accounts.models import User
from safeground.incidents.models import LogEntry
from safeground.incidents.posts import steward_post_assign
from safeground.matches.models import Fixture
from safeground.venues.models import Ground
from safeground.venues.ticket_format import luhn_digit
from tests.browser.turnstiles import turnstile_scanner
from tests.entry.test_gate_pressure import counts_clear

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
# Live updates on a loaded machine: the gates are assessed every SAFEGROUND_GATE_PRESSURE_EVERY
# (2 s) and the warning's entry follows on commit; generous, never a measure.
WAIT_MS = 20_000


def forged(n: int) -> str:
    """A barcode in the ground's format (prefix, length, Luhn digit) that no ticket has."""
    body = f"{700_000_000 + n:09d}"
    return "WH" + body + luhn_digit(body)


@pytest.fixture
def cup_tie_gates_open() -> Fixture:
    counts_clear()
    cup = Fixture.objects.get(away_club__name="Chelsea", stage="Fourth round")
    cup.kickoff = timezone.now() + timedelta(hours=1)
    cup.save(update_fields=["kickoff"])
    Ground.objects.filter(pk=cup.ground_id).update(
        ticket_prefix="WH", ticket_length=12, ticket_check="luhn"
    )
    yield cup
    counts_clear()


def turnstiles(site: str):  # type: ignore[no-untyped-def]
    """Gate F's turnstiles: each scan answers its reason."""
    scan = turnstile_scanner(site, "Gate F turnstiles")
    return lambda barcode, turnstile: scan(barcode, turnstile)["reason"]


def open_live(page: Page, url: str) -> Page:
    page.goto(url)
    expect(page.locator("[data-freshness]")).to_have_attribute("data-connected", "true")
    return page


def test_a_gate_under_pressure_to_the_warning_a_hold_acknowledged_and_the_kick_off_put_back(
    site, new_page, log_in, cup_tie_gates_open
) -> None:
    cup = cup_tie_gates_open
    scan = turnstiles(site)
    # The steward working Gate F's side: the away section, which Gate F serves.
    steward_post_assign(
        fixture=cup,
        steward=User.objects.get(username="steward"),
        assigned_by=User.objects.get(username="loggist"),
        zone="away-se-cup",
    )
    room = open_live(log_in(new_page(), "safety"), f"{site}/fixtures/{cup.pk}/control/")
    phone = open_live(log_in(new_page(PHONE), "steward"), f"{site}/fixtures/{cup.pk}/steward/")
    room.get_by_role("tab", name="Gates").click()
    pressure = room.locator("[data-gate-pressure]")
    gate_f = pressure.locator('[data-gate-rows] tr[data-gate="Gate F (away)"]')

    # The first denials: a few forged tickets and a barcode that is no ticket. Counted by the
    # reason table's names; no warning, nothing in the log.
    for n, turnstile in enumerate(["F03", "F04", "F03"]):
        assert scan(forged(n), turnstile) == "forged"
    assert scan("NOT-A-TICKET", "F04") == "unknown_ticket"
    expect(gate_f).to_contain_text("Forged ticket 3", timeout=WAIT_MS)
    expect(gate_f).to_contain_text("Unknown ticket 1")
    expect(pressure.locator("[data-gate-warnings] li")).to_have_count(0)
    pinned = room.locator("[data-pinned-warnings]")
    expect(pinned).to_be_hidden()

    # The wave: the forgeries jump against the gate's own quiet rate. The Gates tab names the
    # causes and the figures...
    for n in range(3, 12):
        assert scan(forged(n), "F05") == "forged"
    warning = pressure.locator('[data-gate-warnings] li[data-gate-warning="jump"]')
    expect(warning).to_have_count(1, timeout=WAIT_MS)
    expect(warning).to_contain_text(
        "Gate F (away): Forged ticket or Unknown ticket, 13 in the last 60 s (13 a minute"
        " against the gate's 0 a minute over the 10 minutes before)",
        timeout=WAIT_MS,
    )
    expect(gate_f).to_have_class("warn")
    # ...and the log has it, once, pinned above the log as a warning until acknowledged: in the
    # same words, with the figures as they stood when it started (the wave may still have been
    # arriving then).
    told = re.compile(
        r"Gate warning: Gate F \(away\): Forged ticket or Unknown ticket, \d+ in the last 60 s"
        r" \(\d+ a minute against the gate's 0 a minute over the 10 minutes before\)"
    )
    expect(pinned.locator("li")).to_have_count(1, timeout=WAIT_MS)
    expect(pinned.locator("li")).to_contain_text(told)
    logged = LogEntry.objects.get(fixture=cup, kind=LogEntry.Kind.WARNING)
    assert logged.gate.code == "F" and told.fullmatch(logged.text)

    # Hold at the gates, to the zone Gate F serves.
    room.get_by_role("tab", name="Broadcasts").click()
    form = room.locator("[data-broadcast-form]")
    form.get_by_label("Message", exact=True).select_option("hold")
    form.get_by_label("To").select_option("away-se-cup")
    form.get_by_role("button", name="Send broadcast").click()
    sent = room.locator("[data-broadcast-list] li")
    expect(sent).to_have_count(1)
    expect(sent).to_contain_text("Hold at the gates (Away section (cup))")
    expect(sent.locator("[data-broadcast-waiting]")).to_have_text("waiting for: steward")

    # The steward's phone shows it over the page; acknowledged there, seen in the control room.
    dialog = phone.locator("[data-broadcast]")
    expect(dialog).to_be_visible(timeout=WAIT_MS)
    expect(dialog).to_contain_text("Hold at the gates")
    phone.get_by_role("button", name="Acknowledge").click()
    expect(dialog).to_be_hidden()
    expect(sent.locator("[data-broadcast-acks]")).to_contain_text(
        re.compile("acknowledged: (steward|Kim Ashby)"), timeout=WAIT_MS
    )
    expect(sent.locator("[data-broadcast-waiting]")).to_have_text("everyone has acknowledged")

    # The kick-off put back 15 minutes: a decision in the decision log.
    room.goto(f"{site}/fixtures/{cup.pk}/decisions/")
    decision = room.locator("[data-decision-form]")
    decision.get_by_label("Decision-maker (commander)").select_option(
        label=str(User.objects.get(username="safety"))
    )
    decision.get_by_label("Decision", exact=True).fill("Put the kick-off back 15 minutes")
    decision.get_by_label("Rationale").fill("Forged tickets at Gate F: away fans held at the gates")
    decision.get_by_label("Put the kick-off back by (minutes)").fill("15")
    room.get_by_role("button", name="Log the decision").click()
    expect(room.locator("article [data-kickoff-delay]")).to_have_text("put back 15 min")

    # The match's clock on the control room and on the steward's phone gives the new time.
    cup.refresh_from_db()
    new_time = timezone.localtime(cup.kickoff + timedelta(minutes=15)).strftime("%H:%M")
    put_back = f"kick-off put back 15 min to {new_time}"
    open_live(room, f"{site}/fixtures/{cup.pk}/control/")
    expect(room.get_by_role("heading", level=1)).to_contain_text(put_back)
    expect(room.locator("[data-pinned-warnings] li")).to_contain_text(told)  # still standing
    open_live(phone, f"{site}/fixtures/{cup.pk}/steward/")
    expect(phone.get_by_role("heading", level=1)).to_contain_text(put_back)


def test_a_welsh_speaking_safety_officer_reads_the_gate_warning_in_welsh(
    site, new_page, log_in, cup_tie_gates_open
) -> None:
    """Issue 41 item 6: the Gates tab in Welsh, its warning in the catalogue's words with the
    reason table's Welsh names; the log's record of it stays in the site's language (English)
    under a Welsh heading."""
    cup = cup_tie_gates_open
    scan = turnstiles(site)
    room = log_in(new_page(), "safety")
    room.get_by_role("button", name="Cymraeg").click()
    open_live(room, f"{site}/fixtures/{cup.pk}/control/")
    expect(room.locator("html")).to_have_attribute("lang", "cy")
    room.get_by_role("tab", name="Gatiau").click()
    pressure = room.locator("[data-gate-pressure]")

    for n in range(12):
        assert scan(forged(n), "F03" if n % 2 else "F04") == "forged"
    warning = pressure.locator('[data-gate-warnings] li[data-gate-warning="jump"]')
    expect(warning).to_contain_text(
        "Gate F (away): Tocyn ffug neu Tocyn anhysbys, 12 yn yr 60 eiliad diwethaf (12 y funud"
        " o'i gymharu â 0 y funud gan y gât dros y 10 munud cyn hynny)",
        timeout=WAIT_MS,
    )
    expect(pressure.get_by_role("heading", name="Pwysau ar y gatiau")).to_be_visible()
    gate_f = pressure.locator('[data-gate-rows] tr[data-gate="Gate F (away)"]')
    expect(gate_f).to_contain_text("Tocyn ffug 12")
    pinned = room.locator("[data-pinned-warnings]")
    expect(pinned.get_by_role("heading", name="Rhybuddion")).to_be_visible(timeout=WAIT_MS)
    expect(pinned.locator("li")).to_contain_text("Gate warning: Gate F (away): Forged ticket")
