"""Match-day deployment on the phones and in the control room: a steward on a phone-sized screen
checks in at the post and does its checks, and the control room sees both without a reload;
the safety officer cannot mark the plan ready past a failed critical check without a reason."""

import pytest
from playwright.sync_api import Page, expect

from safeground.accounts.models import User
from safeground.deployment.models import CheckIn, CheckResult, MatchCheck, PlanReady
from safeground.deployment.services import check_record, checks_prepare
from safeground.incidents.posts import steward_post_assign
from safeground.matches.models import Fixture
from safeground.matches.services import plan_generate, plan_sign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
AWAY = "away-se-cup"


def cup_tie() -> Fixture:
    return Fixture.objects.get(away_club__name="Chelsea")


def user(username: str) -> User:
    return User.objects.get(username=username)


def posted_with_checks(fixture: Fixture) -> list[MatchCheck]:
    """The steward posted to the away section and the checks prepared (the control room's
    part, done before the gates open); the checks at the steward's post, critical first."""
    steward_post_assign(
        fixture=fixture, steward=user("steward"), assigned_by=user("loggist"), zone=AWAY
    )
    checks_prepare(fixture=fixture)
    return list(MatchCheck.objects.filter(fixture=fixture, zone__code=AWAY))


def test_a_steward_checks_in_and_does_checks_and_the_control_room_sees_it(
    site, new_page, log_in
) -> None:
    fixture = cup_tie()
    mine = posted_with_checks(fixture)
    total = MatchCheck.objects.filter(fixture=fixture).count()
    room = log_in(new_page(), "loggist")
    room.goto(f"{site}/fixtures/{fixture.pk}/control/")
    expect(room.locator("[data-freshness]")).to_contain_text("connected")
    room.get_by_role("tab", name="Posts").click()  # the stewards' tab, beside the map
    panel = room.locator("[data-deployment-panel]")
    expect(panel).to_be_visible()
    kim = panel.locator('[data-steward="steward"]')
    expect(kim).to_contain_text("Kim Ashby: Away section (cup) · not checked in")
    expect(panel.locator("[data-checks-completion]")).to_contain_text(f"0 of {total} done")

    phone = log_in(new_page(PHONE), "steward")
    phone.goto(f"{site}/fixtures/{fixture.pk}/steward/")
    expect(phone.locator("[data-freshness]")).to_contain_text("connected")
    expect(phone.locator("[data-post]")).to_have_text("Your post: Away section (cup)")
    phone.get_by_role("button", name="Check in at my post").click()
    expect(phone.locator("[data-checked-in]")).to_contain_text("Checked in at your post at")
    expect(kim).to_contain_text("checked in")
    expect(kim).not_to_contain_text("not checked in")

    # The first check passes; a critical one fails, with what is wrong.
    checks = phone.locator("[data-checks] li")
    expect(checks).to_have_count(len(mine))
    first = checks.nth(0)
    name = first.locator("strong").inner_text()
    first.get_by_role("button", name="Pass").click()
    expect(phone.locator("[data-checks] li").nth(0)).to_have_attribute("data-state", "pass")
    expect(panel.locator("[data-checks-completion]")).to_contain_text(f"1 of {total} done")
    expect(panel.locator("[data-checks-done]")).to_contain_text(
        f"{name} at Away section (cup): Passed"
    )

    second = phone.locator("[data-checks] li").nth(1)
    second.get_by_label("Note (say what is wrong if it fails)").fill("Gangway 12 blocked by a bin")
    second.get_by_role("button", name="Fail").click()
    expect(phone.locator("[data-checks] li").nth(1)).to_have_attribute("data-state", "fail")
    expect(panel.locator("[data-checks-completion]")).to_contain_text(
        f"2 of {total} done · 1 failed"
    )
    expect(panel.locator("[data-checks-done]")).to_contain_text("Gangway 12 blocked by a bin")

    check_in = CheckIn.objects.get()
    assert (check_in.steward.username, check_in.post.zone.code) == ("steward", AWAY)  # type: ignore[union-attr]
    results = list(
        CheckResult.objects.order_by("pk").values_list("outcome", "note", "by__username")
    )
    assert results == [("pass", "", "steward"), ("fail", "Gangway 12 blocked by a bin", "steward")]


def test_a_note_being_typed_survives_a_live_refresh_of_the_checks(site, new_page, log_in) -> None:
    """A result recorded elsewhere refreshes the panel while the steward types why a check fails:
    the note is still there (and the field still focused) when they press Fail, and goes with it."""
    fixture = cup_tie()
    mine = posted_with_checks(fixture)
    phone = log_in(new_page(PHONE), "steward")
    phone.goto(f"{site}/fixtures/{fixture.pk}/steward/")
    expect(phone.locator("[data-freshness]")).to_contain_text("connected")
    checks = phone.locator("[data-checks] li")
    expect(checks).to_have_count(len(mine))
    typing = checks.nth(1)
    note = typing.get_by_label("Note (say what is wrong if it fails)")
    note.fill("Exit gate 4 padlocked")

    first = mine[0]
    check_record(check=first, by=user("steward"), outcome="pass")  # its event refreshes the panel
    expect(phone.locator(f'[data-check="{first.pk}"]')).to_have_attribute("data-state", "pass")
    expect(note).to_have_value("Exit gate 4 padlocked")
    expect(note).to_be_focused()
    typing.get_by_role("button", name="Fail").click()
    expect(phone.locator(f'[data-check="{mine[1].pk}"]')).to_have_attribute("data-state", "fail")
    assert CheckResult.objects.get(match_check=mine[1]).note == "Exit gate 4 padlocked"


def test_the_safety_officer_overrides_a_failed_critical_check_with_a_reason(
    site, new_page, log_in
) -> None:
    fixture = cup_tie()
    mine = posted_with_checks(fixture)
    plan = plan_generate(fixture=fixture, by=user("safety"))
    plan_sign(fixture=fixture, by=user("safety"), version=plan.number)
    plan_sign(fixture=fixture, by=user("police"), version=plan.number)
    failed = next(check for check in mine if check.critical)
    check_record(check=failed, by=user("steward"), outcome="fail", note="Barrier bent in row C")
    open_critical = MatchCheck.objects.filter(fixture=fixture, critical=True).count()
    overridden = open_critical + 1  # and the communications check: no test alert sent

    page: Page = log_in(new_page(), "safety")
    page.goto(f"{site}/fixtures/{fixture.pk}/deployment/")
    expect(page.locator("[data-open-critical]")).to_have_text(str(open_critical))
    page.locator("[data-mark-ready]").click()
    expect(page.locator(".message")).to_contain_text(
        f"{overridden} critical checks failed or not done"
    )
    expect(page.locator("[data-ready-status]")).to_contain_text("Not marked ready")
    assert not PlanReady.objects.exists()

    reason = "Block C closed; its holders moved to block D"
    page.get_by_label("Override: why the match can go ahead anyway (recorded)").fill(reason)
    page.locator("[data-mark-ready]").click()
    expect(page.locator("[data-ready-status]")).to_contain_text(
        f"overriding {overridden} critical checks: “{reason}”"
    )
    ready = PlanReady.objects.get()
    assert (ready.by.username, ready.version_id) == ("safety", plan.pk)
    assert {c["check"] for c in ready.open_critical} >= {failed.pk}
    assert len(ready.open_critical) == overridden

    # The briefing says so, and the steward's post is on it.
    page.locator("[data-briefing-link]").click()
    expect(page.locator("[data-briefing]")).to_contain_text("Block C closed")
    roster = page.locator("[data-briefing-roster]")
    expect(roster.get_by_role("row", name="Kim Ashby Away section (cup)")).to_be_visible()


def _top(locator) -> float:
    """Where an element starts on the page. The deployment panel is swapped in again as it
    refreshes, and a box read between the swap's two halves is None; evaluating waits for the
    element to be there again."""
    for _ in range(50):  # an element read while detached by the swap reads 0 (it has no box)
        expect(locator).to_be_visible()
        top = float(locator.evaluate("e => e.getBoundingClientRect().top + window.scrollY"))
        if top > 0:
            return top
        locator.page.wait_for_timeout(100)
    return top


def test_on_a_phone_the_report_buttons_come_first_above_check_in_briefing_and_checks(
    site, new_page, log_in
) -> None:
    """Issue 27: at 390 px the report buttons started about 1,670 px down, below check-in, the
    briefing and the check cards. Now the first of them is on the first screen."""
    fixture = cup_tie()
    posted_with_checks(fixture)
    phone = log_in(new_page(PHONE), "steward")
    phone.goto(f"{site}/fixtures/{fixture.pk}/steward/")
    expect(phone.locator("[data-freshness]")).to_contain_text("connected")
    check_in = phone.get_by_role("button", name="Check in at my post")
    expect(check_in).to_be_visible()  # the deployment panel has loaded beneath
    expect(phone.locator("[data-checks] li").first).to_be_visible()
    first_report = phone.locator("[data-report] .tile").first
    report_top = _top(first_report)
    assert report_top + 40 <= PHONE["height"], report_top  # the button itself, not just its edge
    assert report_top < _top(check_in)
    assert report_top < _top(phone.locator("[data-checks]"))
    first_report.click()
    expect(first_report.locator("input")).to_be_checked()
