"""Security in the browser: HTML typed into a report or a broadcast shows as text in the control
room and on the steward's phone (no script runs, no dialog opens), the pages load with no
Content Security Policy violation, and the safety officer revokes a lost scanner's key."""

import pytest
from playwright.sync_api import Page, expect

from safeground.accounts.models import Device, Organisation, User
from safeground.accounts.services import device_create
from safeground.incidents.broadcasting import broadcast_send
from safeground.incidents.posts import steward_post_assign
from safeground.incidents.services import Place, log_entry_append, log_entry_assign
from safeground.matches.models import Fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
HOSTILE = f"{SCRIPT} {IMG}"
PHONE = {"width": 390, "height": 844}
# Injected by the browser driver (not by the page), so the policy does not apply to it.
WATCH = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__violations.push(e.violatedDirective + " " + e.blockedURI);
});
"""


def watched(page: Page) -> tuple[Page, list[str]]:
    """The page, and what it complained of: dialogs opened, CSP errors in the console."""
    seen: list[str] = []
    page.add_init_script(WATCH)

    def dialog(d) -> None:  # type: ignore[no-untyped-def]
        seen.append(f"dialog: {d.message}")
        d.dismiss()

    page.on("dialog", dialog)
    page.on(
        "console",
        lambda m: (
            seen.append(f"console: {m.text}")
            if m.type == "error" and "Content Security Policy" in m.text
            else None
        ),
    )
    return page, seen


def violations(page: Page) -> list[str]:
    return page.evaluate("window.__violations")


def cup_tie() -> Fixture:
    return Fixture.objects.get(away_club__name="Chelsea")


def test_html_in_the_log_shows_as_text_in_the_control_room_with_no_violation(
    site, new_page, log_in
) -> None:
    fixture, loggist = cup_tie(), User.objects.get(username="loggist")
    log_entry_append(
        fixture=fixture, author=loggist, category="missile", text=HOSTILE, place=Place(block="S-L2")
    )
    page, seen = watched(log_in(new_page(), "loggist"))
    page.goto(f"{site}/fixtures/{fixture.pk}/control/")
    expect(page.locator("[data-freshness]")).to_contain_text("connected")
    entries = page.locator("[data-log] .entry[data-incident]")
    expect(entries).to_have_count(1)
    expect(entries.first).to_contain_text(HOSTILE)

    # One more over the live socket, typed into the page itself.
    page.get_by_label("Block", exact=True).fill("S-L2")
    page.get_by_label("What was seen").fill(IMG)
    page.get_by_label("What was seen").press("Enter")
    expect(entries).to_have_count(2)
    expect(page.locator("[data-log]")).to_contain_text(IMG)
    assert page.locator("img[src='x'], [data-log] script").count() == 0
    page.wait_for_timeout(300)  # an onerror would fire as the image failed
    assert seen == []
    assert violations(page) == []


def test_html_in_a_broadcast_and_a_task_shows_as_text_on_the_steward_phone(
    site, new_page, log_in
) -> None:
    fixture = cup_tie()
    safety, loggist = User.objects.get(username="safety"), User.objects.get(username="loggist")
    steward = User.objects.get(username="steward")
    steward_post_assign(fixture=fixture, steward=steward, assigned_by=loggist, zone="away-se-cup")
    report = log_entry_append(
        fixture=fixture, author=loggist, category="missile", text=HOSTILE, place=Place(block="S-L2")
    )
    log_entry_assign(entry=report, author=loggist, assignee=steward)
    broadcast_send(fixture=fixture, sent_by=safety, script="free", text=HOSTILE)

    page, seen = watched(log_in(new_page(PHONE), "steward"))
    page.goto(f"{site}/fixtures/{fixture.pk}/steward/")
    expect(page.locator("[data-freshness]")).to_contain_text("connected")
    dialog = page.locator("[data-broadcast]")
    expect(dialog).to_contain_text(HOSTILE)
    page.get_by_role("button", name="Acknowledge").click()
    expect(page.locator("body")).to_contain_text(HOSTILE)  # the task
    hostile = "img[src='x'], script:not([src]):not([type='application/json'])"
    assert page.locator(hostile).count() == 0
    page.wait_for_timeout(300)
    assert seen == []
    assert violations(page) == []


def test_the_safety_officer_revokes_a_lost_scanners_key(site, new_page, log_in) -> None:
    home = Organisation.objects.get(name="West Ham United")
    device, _ = device_create(organisation=home, name="Scanner 7 (lost)", profile="scanner")
    page, seen = watched(log_in(new_page(), "safety"))
    page.get_by_role("link", name="Turnstiles and scanners").click()
    row = page.locator(f'[data-device="{device.pk}"]')
    expect(row).to_contain_text("Scanner 7 (lost)")
    row.get_by_role("link", name="Revoke").click()
    expect(page.locator("h1")).to_have_text("Revoke Scanner 7 (lost)?")
    page.get_by_role("button", name="Revoke Scanner 7 (lost)").click()
    expect(page.locator(".message")).to_contain_text("Revoked Scanner 7 (lost)")
    expect(page.locator(f'[data-device="{device.pk}"] [data-revoked]')).to_be_visible()
    assert Device.objects.get(pk=device.pk).revoked_at is not None
    assert seen == [] and violations(page) == []
