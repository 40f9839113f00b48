"""The cup tie is planned: the safety officer reads why it is high risk, strengthens the away end
and signs the plan off; the police commander signs it off too."""

import pytest
from playwright.sync_api import expect

from safeground.matches.models import Fixture
from safeground.matches.selectors import plan_current, plan_is_signed_off

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.demo_history
def test_the_safety_officer_and_the_police_commander_sign_off_the_cup_tie(site, new_page, log_in):
    cup = Fixture.objects.get(away_club__name="Chelsea")
    page = log_in(new_page(), "safety")
    page.goto(f"{site}/fixtures/{cup.pk}/")

    # The reasons, in plain words, on the fixture's page.
    reasons = page.locator("[data-risk-reasons]")
    expect(reasons).to_contain_text("v Watford on 10/09/2016")
    expect(reasons).to_contain_text("Arrest v Middlesbrough on 01/10/2016: 4 logged")
    category = page.locator("[data-risk-category]").inner_text()

    page.locator("[data-plan-link]").click()
    page.locator("[data-plan-generate]").click()
    expect(page.locator("[data-plan]")).to_contain_text(f"category {category}")
    away = page.locator("[data-stewards] tr[data-use=away]")
    field = away.locator("input")
    computed = int(field.input_value())
    field.fill(str(computed + 12))
    # Each text box is found by its label, as a screen reader names it (axe: `label`).
    page.get_by_label("When it fails").fill("Landline to the police control box")
    page.locator("[name=note]").fill("Twelve more stewards at the away end")
    page.locator("[data-plan-save]").click()
    expect(page.locator("[data-plan]")).to_have_attribute("data-plan-version", "2")
    expect(away.locator("input")).to_have_value(str(computed + 12))
    expect(page.get_by_label("When it fails")).to_have_value("Landline to the police control box")
    page.locator("[data-plan-sign]").click()
    expect(page.locator("[data-signatures]")).to_contain_text("Safety officer: signed by")
    expect(page.locator("[data-plan-status]")).to_contain_text("Not signed off")

    police = log_in(new_page(), "police")
    police.goto(f"{site}/fixtures/{cup.pk}/plan/")
    expect(police.locator("[data-plan-form] input:not([type=hidden])")).to_have_count(
        0
    )  # reads, does not edit
    police.locator("[data-plan-sign]").click()
    expect(police.locator("[data-plan-status]")).to_contain_text("Signed off")

    plan = plan_current(cup)
    assert plan is not None and plan.number == 2 and plan_is_signed_off(plan)
    away_row = next(row for row in plan.stewards if row["use"] == "away")
    assert away_row["stewards"] == away_row["computed"] + 12
