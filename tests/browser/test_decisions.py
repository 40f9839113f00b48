"""The decision log and the radio's fallback, as people use them: the loggist logs the police
commander's decision (both names, both times; a late one must say why), the control room is
reminded when its review is due and marks it reviewed, the decision is amended by a strike-through
and printed; radio down logs a decision, broadcasts the fallback and shows its banner on the
control room and the steward's phone until it is switched back up."""

import io
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect
from pypdf import PdfReader

from safeground.accounts.models import User
from safeground.decisions.models import Decision, DecisionReview, RadioSwitch
from safeground.incidents.posts import steward_post_assign
from safeground.matches.models import Fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}


def cup_tie() -> Fixture:
    return Fixture.objects.get(away_club__name="Chelsea", stage="Fourth round")


def minutes_ago(minutes: int) -> str:
    """A time for a datetime-local field, on the ground's clock."""
    return timezone.localtime(timezone.now() - timedelta(minutes=minutes)).strftime(
        "%Y-%m-%dT%H:%M"
    )


def fill_decision(page: Page, commander: str, decided: str, review: str) -> None:
    form = page.locator("[data-decision-form]")
    form.get_by_label("Decision-maker (commander)").select_option(label=commander)
    form.get_by_label("Time decided").fill(decided)
    form.get_by_label("Decision", exact=True).fill("Riot police into the south lower concourse")
    form.get_by_label("Rationale").fill("Both sets of fans surging at each other")
    form.get_by_label("Threat and risk assessment").fill("High: face to face")
    form.get_by_label("Options rejected, and why").fill("Stewards alone: outnumbered")
    form.get_by_label("Review at").fill(review)


def test_the_police_commanders_decision_logged_amended_reviewed_and_printed(site, new_page, log_in):
    fixture = cup_tie()
    police = str(User.objects.get(username="police"))
    loggist_name = str(User.objects.get(username="loggist"))
    page = log_in(new_page(), "loggist")
    page.goto(f"{site}/fixtures/{fixture.pk}/decisions/")

    # Logged 20 minutes after it was made, with no reason: refused, naming the field.
    fill_decision(page, police, minutes_ago(20), minutes_ago(1))
    page.get_by_role("button", name="Log the decision").click()
    expect(page.locator("[data-decision-form]")).to_contain_text("say why it is logged late")
    assert not Decision.objects.exists()

    fill_decision(page, police, minutes_ago(3), minutes_ago(1))
    page.get_by_role("button", name="Log the decision").click()
    decision = Decision.objects.get()
    article = page.locator(f"#decision-{decision.entry.seq}")
    expect(article.locator("[data-decision-maker]")).to_contain_text(police)
    expect(article.locator("[data-loggist]")).to_contain_text(loggist_name)
    decided = timezone.localtime(decision.decided_at).strftime("%H:%M")
    logged = timezone.localtime(decision.entry.logged_at).strftime("%H:%M")
    expect(article.locator("[data-decided-at]")).to_contain_text(decided)
    expect(article.locator("[data-loggist]")).to_contain_text(logged)

    # The review time has come: the control room is reminded, and marks it reviewed.
    page.goto(f"{site}/fixtures/{fixture.pk}/control/")
    reminder = page.locator(f"[data-review-reminder='{decision.entry.seq}']")
    expect(reminder).to_contain_text("due for review")
    reminder.get_by_role("link", name="Review it").click()
    article = page.locator(f"#decision-{decision.entry.seq}")
    article.get_by_label("What the review found").fill("Stands: the line holds")
    article.get_by_role("button", name="Mark reviewed").click()
    expect(page.locator(f"#decision-{decision.entry.seq} [data-review]")).to_contain_text(
        "Stands: the line holds"
    )
    assert DecisionReview.objects.filter(decision=decision).count() == 1
    page.goto(f"{site}/fixtures/{fixture.pk}/control/")
    expect(page.locator("[data-decisions-strip]")).to_be_visible()
    expect(page.locator("[data-review-reminder]")).to_have_count(0)

    # Amended: a new entry; the old one stays, struck through.
    page.goto(f"{site}/fixtures/{fixture.pk}/decisions/")
    page.locator(f"#decision-{decision.entry.seq}").get_by_role("link", name="Amend").click()
    page.get_by_label("Why it is amended").fill("Second unit arrived")
    page.get_by_label("Decision", exact=True).fill("Two public order units into the concourse")
    # Its review time has passed: not copied, and the form says so.
    expect(page.get_by_label("Review at")).to_have_value("")
    expect(page.locator("[data-amend-form]")).to_contain_text("has passed: give a new one")
    page.get_by_role("button", name="Log the amendment").click()
    amendment = Decision.objects.get(amends=decision)
    old = page.locator(f"#decision-{decision.entry.seq}")
    expect(old.locator("del[data-struck]")).to_contain_text("Riot police into the south lower")
    expect(old).to_contain_text(f"amended by #{amendment.entry.seq}")
    expect(page.locator(f"#decision-{amendment.entry.seq} [data-amends]")).to_contain_text(
        "Second unit arrived"
    )

    # Printed.
    pdf = page.request.get(f"{site}/fixtures/{fixture.pk}/decisions.pdf")
    assert pdf.ok
    text = " ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf.body())).pages)
    text = " ".join(text.split())
    assert "Two public order units into the concourse" in text
    assert f"amended by #{amendment.entry.seq}" in text
    assert police in text and loggist_name in text


def test_radio_down_logs_a_decision_broadcasts_the_fallback_and_shows_its_banner(
    site, new_page, log_in
):
    fixture = cup_tie()
    steward_post_assign(
        fixture=fixture,
        steward=User.objects.get(username="steward"),
        assigned_by=User.objects.get(username="loggist"),
        zone="away-se-cup",
    )
    safety = str(User.objects.get(username="safety"))
    room = log_in(new_page(), "loggist")
    room.goto(f"{site}/fixtures/{fixture.pk}/control/")
    expect(room.locator("[data-freshness]")).to_contain_text("connected")
    phone = log_in(new_page(PHONE), "steward")
    phone.goto(f"{site}/fixtures/{fixture.pk}/steward/")
    expect(phone.locator("[data-freshness]")).to_contain_text("connected")
    expect(phone.locator("[data-radio-banner]")).to_have_count(0)

    strip = room.locator("[data-decisions-strip]")
    strip.get_by_label("Decided by").select_option(label=safety)
    strip.get_by_label("What happened").fill("No answer on channel 1 from any supervisor")
    strip.get_by_role("button", name="Radio down").click()

    expect(room.locator("[data-radio-banner]")).to_contain_text("Radio down since")
    expect(phone.locator("[data-radio-banner]")).to_contain_text("Radio down since")
    dialog = phone.locator("[data-broadcast]")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Radio down.")
    switch = RadioSwitch.objects.get()
    assert switch.down and switch.decision.decision_maker.username == "safety"
    assert switch.decision.rationale == "No answer on channel 1 from any supervisor"
    phone.get_by_role("button", name="Acknowledge").click()

    room.locator("[data-decisions-strip]").get_by_role("button", name="Radio back up").click()
    expect(room.locator("[data-radio-banner]")).to_have_count(0)
    expect(phone.locator("[data-radio-banner]")).to_have_count(0)
    assert RadioSwitch.objects.count() == 2


def test_the_radio_strip_is_one_labelled_row_and_keeps_the_commander_chosen(site, new_page, log_in):
    """Issue 38: the strip was a loose row, its note unlabelled, and "Decided by" went back to
    the first name after each switch."""
    fixture = cup_tie()
    police = str(User.objects.get(username="police"))
    room = log_in(new_page({"width": 1366, "height": 768}), "loggist")
    room.goto(f"{site}/fixtures/{fixture.pk}/control/")
    strip = room.locator("[data-decisions-strip]")
    maker, note = strip.get_by_label("Decided by"), strip.get_by_label("What happened")
    switch = strip.get_by_role("button", name="Radio down")
    # Connected: the strip has been fetched again on connecting, not in the middle of measuring.
    expect(room.locator("[data-freshness]")).to_contain_text("connected")
    expect(note).to_be_visible()

    # One row on a desk screen: the two fields and the button side by side, each label above
    # its field. A live refresh may swap the strip in at any moment, so every box is read in one
    # synchronous script (the page cannot change during it), again until the strip is whole.
    measure = """() => {
        const strip = document.querySelector('[data-decisions-strip]');
        const form = strip && strip.querySelector('[data-radio-form]');
        if (!form) return null;
        const box = (el) => { if (!el) return null; const r = el.getBoundingClientRect();
            return r.width ? {y: r.y, height: r.height} : null; };
        const field = (text) => { const label = [...form.querySelectorAll('label')]
                .find((l) => l.textContent.trim().startsWith(text));
            return label && [box(label), box(label.control)]; };
        return {maker: field('Decided by'), note: field('What happened'),
                switch: box(form.querySelector('[data-radio-switch]'))};
    }"""
    for _ in range(50):
        seen = room.evaluate(measure)
        if seen and seen["maker"] and seen["note"] and seen["switch"]:
            break
        room.wait_for_timeout(100)
    assert seen and seen["maker"] and seen["note"] and seen["switch"], seen
    boxes = [seen["maker"][1], seen["note"][1], seen["switch"]]
    assert all(boxes), seen
    assert max(b["y"] + b["height"] for b in boxes) - min(b["y"] for b in boxes) < 60, boxes
    for name in ("maker", "note"):
        above, below = seen[name]
        assert above and below and above["y"] + above["height"] <= below["y"] + 1, seen

    maker.select_option(label=police)
    note.fill("No answer on channel 1")
    switch.click()
    expect(strip.locator("[data-radio-banner]")).to_be_visible()
    expect(strip.get_by_label("Decided by")).to_have_value(
        str(User.objects.get(username="police").pk)
    )
    expect(strip.get_by_label("What happened")).to_have_value("")

    # Back up without choosing again: the same commander decides it.
    strip.get_by_role("button", name="Radio back up").click()
    expect(strip.locator("[data-radio-banner]")).to_have_count(0)
    expect(strip.get_by_label("Decided by")).to_have_value(
        str(User.objects.get(username="police").pk)
    )
    assert [s.decision.decision_maker.username for s in RadioSwitch.objects.order_by("pk")] == [
        "police",
        "police",
    ]


def test_the_safety_officer_puts_the_kick_off_back_and_the_clock_and_the_report_show_it(
    site, new_page, log_in
) -> None:
    """Issue 41 item 5: a kick-off delay is a decision with its reasons, in the decision log; the
    match's clock on every page (its heading) and the post-match report give the new time."""
    fixture = cup_tie()
    safety = str(User.objects.get(username="safety"))
    page = log_in(new_page(), "safety")
    page.goto(f"{site}/fixtures/{fixture.pk}/decisions/")
    form = page.locator("[data-decision-form]")
    form.get_by_label("Decision-maker (commander)").select_option(label=safety)
    form.get_by_label("Decision", exact=True).fill("Put the kick-off back 15 minutes")
    form.get_by_label("Rationale").fill("2,000 away supporters still queuing at Gate F")
    form.get_by_label("Put the kick-off back by (minutes)").fill("15")
    page.get_by_role("button", name="Log the decision").click()

    decision = Decision.objects.get()
    article = page.locator(f"#decision-{decision.entry.seq}")
    expect(article.locator("[data-kickoff-delay]")).to_have_text("put back 15 min")
    expect(article).to_contain_text("2,000 away supporters still queuing at Gate F")
    new_time = timezone.localtime(fixture.kickoff + timedelta(minutes=15)).strftime("%H:%M")
    put_back = f"kick-off put back 15 min to {new_time}"
    new_day = timezone.localtime(fixture.kickoff).strftime("%d/%m/%Y")

    page.goto(f"{site}/fixtures/{fixture.pk}/control/")
    expect(page.get_by_role("heading", level=1)).to_contain_text(put_back)
    page.goto(f"{site}/fixtures/{fixture.pk}/")
    expect(page.locator("[data-match-day]")).to_contain_text(put_back)

    page.goto(f"{site}/fixtures/{fixture.pk}/report/")
    expect(page.locator("p.meta [data-kickoff-delay]")).to_have_text(
        f"(put back 15 min to {new_day} {new_time} by a decision in the log)"
    )
    expect(page.locator("[data-report-decisions] [data-kickoff-delay]")).to_have_text(
        "put back 15 min"
    )
