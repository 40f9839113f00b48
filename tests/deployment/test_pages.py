"""Deployment's pages: the steward's phone panel (post, check-in, checks), the control room's
panel, the board with its forms, and the briefing as a page and as a PDF."""

import io
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from pypdf import PdfReader

from safeground.deployment.models import CheckIn, CheckResult, PlanReady
from safeground.deployment.services import steward_check_in
from safeground.incidents.models import StewardPost
from safeground.matches.services import risk_assessment_current
from tests import factories

pytestmark = pytest.mark.django_db

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


@pytest.fixture
def cup(match_day, no_second_factor):
    return match_day.cup_tie


def words(text: str) -> str:
    return " ".join(text.split())


def html(response) -> str:
    assert response.status_code == 200, response.status_code
    return words(response.content.decode())


def test_the_log_pages_load_deployment_panels_for_those_who_may_see_them(cup, client_for) -> None:
    steward_page = html(client_for("steward").get(reverse("steward_page", args=[cup.pk])))
    assert reverse("deployment_steward_panel", args=[cup.pk]) in steward_page
    assert 'data-live-panel="steward.post steward.checkin check.result"' in steward_page
    panel = reverse("deployment_control_panel", args=[cup.pk])
    room = html(client_for("loggist").get(reverse("control_room", args=[cup.pk])))
    assert f'data-live-panel="steward.post steward.checkin check.result" hx-get="{panel}"' in room
    assert "Stewards and checks" in html(client_for("loggist").get(panel))
    # The police share the live log, not the home club's deployment: their panel is the
    # briefing's links, never refreshed by deployment's events.
    room = html(client_for("police").get(reverse("control_room", args=[cup.pk])))
    assert f'data-live-panel="" hx-get="{panel}"' in room
    police_panel = html(client_for("police").get(panel))
    assert reverse("briefing", args=[cup.pk]) in police_panel
    assert "Stewards and checks" not in police_panel


def test_a_steward_checks_in_and_does_a_check_from_the_phone_panel(
    match_day, cup, client_for
) -> None:
    phone = client_for("steward")
    panel_url = reverse("deployment_steward_panel", args=[cup.pk])
    assert "Check in at my post" not in html(phone.get(panel_url))  # no post, nothing to check in

    factories.post(cup, match_day.cast["steward"])
    checks = factories.checks(cup)
    away = cup.zones.get(use="away").zone
    mine = [c for c in checks if c.zone_id == away.pk]
    page = html(phone.get(panel_url))
    assert "Check in at my post" in page
    shown = [int(n) for n in re.findall(r'data-check="(\d+)"', page)]
    assert sorted(shown) == sorted(c.pk for c in mine)  # the checks at the post, no others

    page = html(phone.post(reverse("deployment_check_in", args=[cup.pk])))
    check_in = CheckIn.objects.get()
    assert f"Checked in at your post at {check_in.checked_in_at:%H:%M}" in page

    photo = SimpleUploadedFile("rail.png", PNG, content_type="image/png")
    url = reverse("deployment_check_record", args=[cup.pk, mine[0].pk])
    page = html(phone.post(url, {"outcome": "fail", "note": "Rail loose by row K", "photo": photo}))
    result = CheckResult.objects.get()
    assert (result.match_check, result.outcome, result.note) == (
        mine[0],
        "fail",
        "Rail loose by row K",
    )
    assert f'data-check="{mine[0].pk}" data-state="fail"' in page
    assert "Failed" in page and "Rail loose by row K" in page
    photo_url = reverse("deployment_check_photo", args=[cup.pk, result.pk])
    assert photo_url in html(client_for("supervisor").get(reverse("deployment", args=[cup.pk])))
    served = client_for("supervisor").get(photo_url)
    assert served["Content-Type"] == "image/png"
    assert b"".join(served.streaming_content) == PNG  # type: ignore[attr-defined]
    assert client_for("police").get(photo_url).status_code == 403

    # A refusal comes back in the panel, and nothing is written.
    url = reverse("deployment_check_record", args=[cup.pk, mine[1].pk])
    page = html(phone.post(url, {"outcome": "fail", "note": ""}))
    assert f"{mine[1].name}: say what is wrong" in page
    assert CheckResult.objects.count() == 1


def test_the_control_room_panel_shows_who_is_in_and_what_is_done(
    match_day, cup, client_for
) -> None:
    cast = match_day.cast
    factories.post(cup, cast["steward"])
    factories.post(cup, cast["supervisor"], gate="F")
    steward_check_in(fixture=cup, steward=cast["steward"])
    checks = factories.checks(cup)
    factories.check_done(checks[0], cast["supervisor"])
    page = html(client_for("loggist").get(reverse("deployment_control_panel", args=[cup.pk])))
    assert "<strong>2</strong> posted · <strong>1</strong> not checked in" in page
    assert f"Checks: <strong>1 of {len(checks)}</strong> done" in page
    assert f"{checks[0].name} at {checks[0].place}: Passed" in page


def test_the_board_posts_a_steward_and_refuses_a_steward_posting(
    match_day, cup, client_for
) -> None:
    url = reverse("deployment_post", args=[cup.pk])
    response = client_for("supervisor").post(url, {"steward": "steward", "place": "gate:F"})
    assert response.status_code == 302
    post = StewardPost.objects.get()
    assert (post.steward.username, post.gate.code) == ("steward", "F")  # type: ignore[union-attr]
    page = html(client_for("supervisor").get(reverse("deployment", args=[cup.pk])))
    assert "Gate F (away)" in page and "not checked in" in page

    # Refused: an unknown place names it; a steward may not post anyone.
    response = client_for("supervisor").post(
        url, {"steward": "steward", "place": "gate:Z"}, follow=True
    )
    assert "gate: no gate &#x27;Z&#x27;" in html(response)
    assert (
        client_for("steward").post(url, {"steward": "steward", "place": "gate:F"}).status_code
        == 403
    )
    assert StewardPost.objects.count() == 1


def test_ready_is_refused_on_the_page_until_overridden_and_a_steward_cannot_override(
    match_day, cup, client_for
) -> None:
    cast = match_day.cast
    factories.plan_signed_off(cup, cast)
    factories.checks(cup)  # none done: every critical check is open
    url = reverse("deployment_ready", args=[cup.pk])
    assert client_for("steward").post(url, {"override_reason": "go"}).status_code == 403
    page = html(client_for("safety").post(url, {}, follow=True))
    assert "override_reason:" in page and "critical checks failed or not done" in page
    assert not PlanReady.objects.exists()
    page = html(
        client_for("safety").post(url, {"override_reason": "Checked by radio"}, follow=True)
    )
    ready = PlanReady.objects.get()
    assert ready.override_reason == "Checked by radio"
    assert f"overriding {len(ready.open_critical)} critical checks" in page


def test_a_supervisor_sends_a_check_back_from_the_board(match_day, cup, client_for) -> None:
    cast = match_day.cast
    factories.post(cup, cast["steward"])
    away = cup.zones.get(use="away").zone
    check = next(c for c in factories.checks(cup) if c.zone_id == away.pk)
    factories.check_done(check, cast["steward"])
    url = reverse("deployment_check_send_back", args=[cup.pk, check.pk])
    assert client_for("steward").post(url, {"note": "Look again"}).status_code == 403
    assert client_for("supervisor").post(url, {"note": "Look again"}).status_code == 302
    assert [r.outcome for r in check.results.order_by("pk")] == ["pass", "recheck"]
    # Back on the steward's phone, to do again, with the supervisor's reason.
    phone = html(client_for("steward").get(reverse("deployment_steward_panel", args=[cup.pk])))
    assert f'data-check="{check.pk}" data-state="recheck"' in phone
    assert "Sent back: check again" in phone and "Look again" in phone
    assert reverse("deployment_check_record", args=[cup.pk, check.pk]) in phone


# --- the briefing -------------------------------------------------------------------------------


def briefing_facts(match_day, cup):
    """The cup tie planned, signed off, the steward posted and checked in, one check done."""
    cast = match_day.cast
    plan = factories.plan_signed_off(cup, cast)
    post = factories.post(cup, cast["steward"])
    steward_check_in(fixture=cup, steward=cast["steward"])
    checks = factories.checks(cup)
    factories.check_done(checks[0], cast["supervisor"])
    assessment = risk_assessment_current(fixture=cup)
    reasons = [reason for factor in assessment.factors for reason in factor["reasons"]]
    assert reasons, "the assessment explains itself"
    return plan, post, checks, assessment, reasons


def test_the_briefing_page_has_the_category_reasons_plan_deployment_and_plan(
    match_day, cup, client_for
) -> None:
    plan, post, checks, assessment, reasons = briefing_facts(match_day, cup)
    page = html(client_for("police").get(reverse("briefing", args=[cup.pk])))
    assert f"Category {assessment.category}" in page
    for reason in reasons:
        assert words(reason.replace("'", "&#x27;")) in page
    assert f"Version {plan.number}, category {plan.category}" in page
    assert f"{match_day.cast['steward']}</td><td>{post.zone}</td>" in page
    assert f"1 of {len(checks)} done" in page
    assert page.count("<polygon") == cup.ground.blocks.count() + 1  # every block and the pitch


def test_the_briefing_prints_as_a_pdf_with_its_key_text(match_day, cup, client_for) -> None:
    _, post, _, assessment, reasons = briefing_facts(match_day, cup)
    response = client_for("safety").get(reverse("briefing_pdf", args=[cup.pk]))
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    reader = PdfReader(io.BytesIO(response.content))
    pages = len(reader.pages)
    assert pages >= 2  # the seating plan starts a page of its own
    text = words(" ".join(page.extract_text() for page in reader.pages))
    assert f"Category {assessment.category}" in text
    for reason in reasons:
        assert words(reason) in text
    assert f"{match_day.cast['steward']} {post.zone}" in text
    assert f"Page {pages} of {pages}" in text


def test_the_panels_keep_a_query_budget_with_many_stewards_and_checks(
    match_day, cup, client_for, django_assert_max_num_queries
) -> None:
    """Every control-room screen fetches its panel again after each check-in or result."""
    cast = match_day.cast
    factories.plan_signed_off(cup, cast)
    for n in range(6):
        extra = factories.member(cast.home, "steward", username=f"steward{n}")
        factories.post(cup, extra, gate="F" if n % 2 else "")
    checks = factories.checks(cup)
    for check in checks[:8]:
        factories.check_done(check, cast["supervisor"])
    room, phone = client_for("loggist"), client_for("supervisor")
    factories.post(cup, cast["supervisor"])
    with django_assert_max_num_queries(18):
        html(room.get(reverse("deployment_control_panel", args=[cup.pk])))
    with django_assert_max_num_queries(16):
        html(phone.get(reverse("deployment_steward_panel", args=[cup.pk])))


def test_a_steward_moved_to_a_gate_sees_the_gate_and_checks_in_again(
    match_day, cup, client_for
) -> None:
    steward = match_day.cast["steward"]
    factories.post(cup, steward)
    checks = factories.checks(cup)
    steward_check_in(fixture=cup, steward=steward)
    factories.post(cup, steward, gate="F")
    gate = cup.ground.gates.get(code="F")
    page = html(client_for("steward").get(reverse("deployment_steward_panel", args=[cup.pk])))
    assert f"Posted at <strong>{gate}</strong>" in page
    assert "Check in at my post" in page
    shown = sorted(int(n) for n in re.findall(r'data-check="(\d+)"', page))
    assert shown == sorted(c.pk for c in checks if c.gate_id == gate.pk)


def test_a_briefing_before_any_plan_gives_the_current_category(
    match_day, client_for, no_second_factor
) -> None:
    league = match_day.league_match
    page = html(client_for("safety").get(reverse("briefing", args=[league.pk])))
    assessment = league.assessments.get()  # assessed for the briefing, as the fixture page does
    assert f"Category {assessment.category}" in page
    assert "No match plan yet." in page and "not prepared yet" in page
