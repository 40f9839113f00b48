"""Gate pressure on the control room's Gates tab (issue 41): the safety officer watches Gate F as
its first forged tickets are turned away (counted by the reason table's name, no warning yet),
then as the forgeries jump: the gate warning names its cause and figures, its row and its place
on the map are marked, without a reload."""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from safeground.matches.models import Fixture
from safeground.venues.models import Ground
from safeground.venues.ticket_format import luhn_digit
from tests.browser.turnstiles import turnstile_scanner
from tests.entry.test_gate_pressure import counts_clear

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WAIT_MS = 20_000  # the gates are assessed every SAFEGROUND_GATE_PRESSURE_EVERY (2 s)


def forged(n: int) -> str:
    body = f"{700_000_000 + n:09d}"
    return "WH" + body + luhn_digit(body)


def test_a_gate_under_pressure_from_its_first_forged_tickets_to_the_warning(site, new_page, log_in):
    counts_clear()
    cup = Fixture.objects.get(away_club__name="Chelsea")
    cup.kickoff = timezone.now() + timedelta(hours=1)  # the gates are open now
    cup.save(update_fields=["kickoff"])
    Ground.objects.filter(pk=cup.ground_id).update(
        ticket_prefix="WH", ticket_length=12, ticket_check="luhn"
    )
    scan = turnstile_scanner(site, "Gate F turnstiles")

    page = log_in(new_page(), "safety")
    page.goto(f"{site}/fixtures/{cup.pk}/control/")
    expect(page.locator("[data-freshness]")).to_contain_text("connected")
    page.get_by_role("tab", name="Gates").click()

    # The first denials: three forged tickets at two turnstiles, and a barcode that is no ticket.
    for n, turnstile in enumerate(["F03", "F04", "F03"]):
        assert scan(forged(n), turnstile)["reason"] == "forged"
    assert scan("NOT-A-TICKET", "F04")["reason"] == "unknown_ticket"
    pressure = page.locator("[data-gate-pressure]")
    gate_f = pressure.locator('[data-gate-rows] tr[data-gate="Gate F (away)"]')
    expect(gate_f).to_contain_text("Forged ticket 3", timeout=WAIT_MS)
    expect(gate_f).to_contain_text("Unknown ticket 1")
    # A turnstile's rate is over the policy's silent window (120 s): two scans, one a minute.
    expect(gate_f).to_contain_text("F03 1/min")
    expect(pressure.locator("[data-gate-warnings] li")).to_have_count(0)
    expect(gate_f).not_to_have_class("warn")

    # The wave: the forgeries jump against the gate's own (quiet) rate.
    for n in range(3, 12):
        assert scan(forged(n), "F05")["reason"] == "forged"
    warning = pressure.locator('[data-gate-warnings] li[data-gate-warning="jump"]')
    expect(warning).to_have_count(1, timeout=WAIT_MS)
    expect(warning).to_contain_text(
        "Gate F (away): Forged ticket or Unknown ticket, 13 in the last 60 s (13 a minute"
        " against the gate's 0 a minute over the 10 minutes before)"
    )
    expect(gate_f).to_have_class("warn")
    expect(page.locator('[data-plan] .gate[data-gate="Gate F (away)"]')).to_have_class("gate warn")
    # The other gates are not warned of.
    expect(page.locator("[data-plan] .gate.warn")).to_have_count(1)
    counts_clear()
