"""What partner agencies were told, as the safety officer finds it: a broadcast sent from the
control room, then the fixture's page, its link to what partners were told, and there the
broadcast as the police were told it, with its signed CAP alert; in Welsh, the page's words are
Welsh."""

import time

import pytest
from playwright.sync_api import expect

from safeground.incidents.posts import steward_post_assign
from safeground.matches.models import Fixture
from safeground.partners.models import PartnerAlert

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_safety_officer_sees_what_partners_were_told_of_the_broadcast_they_sent(
    site, new_page, log_in
) -> None:
    cup_tie = Fixture.objects.get(away_club__name="Chelsea", stage="Fourth round")
    steward_post_assign(
        fixture=cup_tie,
        steward=cup_tie.ground.organisation.memberships.get(user__username="steward").user,
        assigned_by=cup_tie.ground.organisation.memberships.get(user__username="safety").user,
        zone="away-se-cup",
    )
    page = log_in(new_page(), "safety")
    page.goto(f"{site}/fixtures/{cup_tie.pk}/control/")
    expect(page.locator("[data-freshness]")).to_contain_text("connected")
    page.get_by_role("tab", name="Broadcasts").click()
    form = page.locator("[data-broadcast-form]")
    form.get_by_label("Message", exact=True).select_option("hold")
    form.get_by_label("To").select_option("away-se-cup")
    form.get_by_role("button", name="Send broadcast").click()
    expect(page.locator("[data-broadcast-list] li")).to_have_count(1)
    # The list shows the broadcast from its live frame, which goes out as the write commits;
    # partners are told just after, by the same request (the first alert makes the key too).
    deadline = time.monotonic() + 10
    while not PartnerAlert.objects.filter(fixture=cup_tie).exists():
        assert time.monotonic() < deadline, "partners were not told of the broadcast"
        time.sleep(0.1)

    page.goto(f"{site}/fixtures/{cup_tie.pk}/")
    panel = page.locator("[data-partners-panel]")
    expect(panel).to_contain_text("1 alert sent to partner agencies.")
    panel.get_by_role("link", name="What partners were told").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("What partners were told")
    alert = PartnerAlert.objects.get(fixture=cup_tie, source="broadcast")
    row = page.locator(f'[data-partner-alert="{alert.identifier}"]')
    expect(row.locator("[data-kind]")).to_have_text("Broadcast")
    expect(row.locator("[data-headline]")).to_have_text(alert.headline)
    assert alert.headline.startswith("Hold at the gates · ")
    expect(row.locator("[data-told]")).to_contain_text("Metropolitan Police")
    xml = page.request.get(site + row.locator("[data-xml]").get_attribute("href"))
    assert xml.status == 200 and xml.headers["content-type"] == "application/cap+xml"
    assert xml.body() == bytes(alert.xml)

    page.locator("[data-language-switch]").get_by_role("button", name="Cymraeg").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Beth ddywedwyd wrth bartneriaid")
    expect(page.get_by_role("columnheader", name="Pennawd")).to_be_visible()
    expect(row.locator("[data-kind]")).to_have_text("Darllediad")
    expect(row.locator("[data-headline]")).to_have_text(
        alert.headline_names.get("cy", alert.headline)
    )
    expect(row.locator("[data-xml]")).to_have_text("XML CAP")
