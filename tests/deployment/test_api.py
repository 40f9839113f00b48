"""The deployment API: the board's figures, refusals in the one error shape (409 for a plan
not ready, naming the field), and nothing written on a refusal."""

import pytest
from django.urls import reverse

from safeground.deployment.models import CheckIn, CheckResult, PlanReady
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def cup(match_day, no_second_factor):
    return match_day.cup_tie


def test_the_board_gives_the_plan_beside_the_stewards_posted(match_day, cup, client_for) -> None:
    cast = match_day.cast
    plan = factories.plan_signed_off(cup, cast)
    post = factories.post(cup, cast["steward"])
    assert (
        client_for("steward").post(reverse("api:deployment_check_in", args=[cup.pk])).status_code
        == 201
    )
    checks = factories.checks(cup)
    factories.check_done(checks[0], cast["supervisor"], outcome="fail")
    body = client_for("loggist").get(reverse("api:deployment_board", args=[cup.pk])).json()
    assert body["plan"] == {"version": plan.number, "category": plan.category, "signed_off": True}
    assert [(s["steward"], s["post"]) for s in body["stewards"]] == [("steward", str(post.zone))]
    assert body["stewards"][0]["checked_in_at"] is not None
    assert body["not_posted"] == ["supervisor"]
    planned = {row["zone"]: row["stewards"] for row in plan.stewards}
    assert {z["zone"]: z["planned"] for z in body["zones"]} == planned
    assert {z["zone"]: z["posted"] for z in body["zones"] if z["posted"]} == {post.zone.code: 1}  # type: ignore[union-attr]
    critical = sum(c.critical for c in checks)
    assert (body["checks"]["total"], body["checks"]["done"], body["checks"]["failed"]) == (
        len(checks),
        1,
        1,
    )
    assert len(body["checks"]["open_critical"]) == critical
    assert body["ready"] is None


def test_ready_is_refused_with_409_until_overridden(match_day, cup, client_for) -> None:
    factories.plan_signed_off(cup, match_day.cast)
    checks = factories.checks(cup)
    url = reverse("api:deployment_plan_ready", args=[cup.pk])
    refused = client_for("safety").post(url, {}, "application/json")
    assert refused.status_code == 409
    assert (refused.json()["code"], refused.json()["field"]) == (
        "plan_not_ready",
        "override_reason",
    )
    assert not PlanReady.objects.exists()
    made = client_for("safety").post(
        url, {"override_reason": "Walked by radio"}, "application/json"
    )
    assert made.status_code == 201
    assert made.json()["override_reason"] == "Walked by radio"
    # The critical checks, and the communications check (no test alert sent yet).
    assert len(made.json()["open_critical"]) == sum(c.critical for c in checks) + 1
    steward = client_for("steward").post(url, {"override_reason": "me too"}, "application/json")
    assert steward.status_code == 403 and PlanReady.objects.count() == 1


def test_bad_results_and_check_ins_are_refused_in_the_error_shape(
    match_day, cup, client_for
) -> None:
    phone = client_for("steward")
    no_post = phone.post(reverse("api:deployment_check_in", args=[cup.pk]))
    assert no_post.status_code == 409
    assert (no_post.json()["code"], no_post.json()["field"]) == ("deployment_refused", "post")
    factories.post(cup, match_day.cast["steward"])
    away = cup.zones.get(use="away").zone
    check = next(c for c in factories.checks(cup) if c.zone_id == away.pk)
    url = reverse("api:deployment_check_result", args=[cup.pk, check.pk])
    unknown = phone.post(url, {"outcome": "maybe"}, "application/json")
    assert unknown.status_code == 422 and unknown.json()["code"] == "invalid_request"
    silent = phone.post(url, {"outcome": "fail"}, "application/json")
    assert (silent.status_code, silent.json()["field"]) == (400, "note")
    other = factories.checks(match_day.league_match)[0]
    elsewhere = phone.post(
        reverse("api:deployment_check_result", args=[cup.pk, other.pk]),
        {"outcome": "pass"},
        "application/json",
    )
    assert elsewhere.status_code == 404
    assert not CheckResult.objects.exists() and not CheckIn.objects.exists()
