"""The match plan: made from the category by the policy, edited, versioned, signed off by two."""

import math

import pytest
from django.urls import reverse

from safeground.append_only import AppendOnlyError
from safeground.errors import Forbidden
from safeground.matches.models import PlanVersion
from safeground.matches.policy import policy_current
from safeground.matches.selectors import fixture_safe_capacities, plan_current, plan_is_signed_off
from safeground.matches.services import (
    PlanChanged,
    plan_generate,
    plan_revise,
    plan_sign,
    risk_assessment_current,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def cup(match_day):
    return match_day.cup_tie


def away_zone(version: PlanVersion) -> dict:
    return next(row for row in version.stewards if row["use"] == "away")


def test_the_plan_is_made_from_the_category_with_stewards_per_zone_computed(cup, cast):
    plan = plan_generate(fixture=cup, by=cast["safety"])

    category = risk_assessment_current(fixture=cup).category
    policy = policy_current().plans[category]
    assert plan.number == 1 and plan.category == category
    assert plan.measures == policy.measures
    assert plan.communications == {"primary": policy.primary, "fallback": policy.fallback}
    uses = {fz.zone.code: fz.use for fz in cup.zones.select_related("zone")}
    assert {row["zone"] for row in plan.stewards} == set(uses)
    safe = {
        fz.zone.code: c.safe
        for fz in cup.zones.select_related("zone")
        for zone_id, c in fixture_safe_capacities(cup).items()
        if zone_id == fz.zone_id
    }
    for row in plan.stewards:
        per = policy.spectators_per_steward[uses[row["zone"]]]
        assert (row["capacity"], row["per"]) == (safe[row["zone"]], per)
        assert row["stewards"] == row["computed"] == math.ceil(safe[row["zone"]] / per)
    spectators = sum(row["capacity"] for row in plan.stewards)
    assert plan.first_aid["spectators"] == spectators
    assert plan.first_aid["first_aiders"] >= 1


def test_signed_off_only_when_the_safety_officer_and_the_police_commander_sign(cup, cast):
    plan = plan_generate(fixture=cup, by=cast["safety"])
    for username in ("steward", "loggist", "supervisor", "spotter", "liaison", "banofficer"):
        with pytest.raises(Forbidden):
            plan_sign(fixture=cup, by=cast[username], version=plan.number)

    plan_sign(fixture=cup, by=cast["safety"], version=plan.number)
    assert not plan_is_signed_off(plan_current(cup))
    plan_sign(fixture=cup, by=cast["police"], version=plan.number)

    signed = plan_current(cup)
    assert plan_is_signed_off(signed)
    by_role = {s.role: s.user for s in signed.sign_offs.all()}
    assert by_role == {"safety_officer": cast["safety"], "police_commander": cast["police"]}
    assert all(s.signed_at for s in signed.sign_offs.all())


def test_an_edit_after_sign_off_is_a_new_version_that_needs_both_again(cup, cast):
    plan = plan_generate(fixture=cup, by=cast["safety"])
    plan_sign(fixture=cup, by=cast["safety"], version=plan.number)
    plan_sign(fixture=cup, by=cast["police"], version=plan.number)
    away = away_zone(plan)

    edited = plan_revise(
        fixture=cup,
        by=cast["safety"],
        based_on=plan.number,
        stewards={away["zone"]: away["stewards"] + 10},
        note="More stewards at the away end",
    )

    assert edited.number == plan.number + 1
    assert away_zone(edited)["stewards"] == away["stewards"] + 10
    assert away_zone(edited)["computed"] == away["computed"]  # the working stays visible
    assert not plan_is_signed_off(plan_current(cup))
    assert plan_is_signed_off(PlanVersion.objects.get(pk=plan.pk))  # the old one keeps its two
    with pytest.raises(PlanChanged):  # signing the old version is refused
        plan_sign(fixture=cup, by=cast["police"], version=plan.number)
    plan_sign(fixture=cup, by=cast["police"], version=edited.number)
    plan_sign(fixture=cup, by=cast["safety"], version=edited.number)
    assert plan_is_signed_off(plan_current(cup))


def test_a_change_made_on_an_old_version_is_refused(cup, cast):
    plan = plan_generate(fixture=cup, by=cast["safety"])
    plan_revise(fixture=cup, by=cast["safety"], based_on=plan.number, measures={"alcohol": "None"})
    with pytest.raises(PlanChanged):
        plan_revise(
            fixture=cup, by=cast["safety"], based_on=plan.number, measures={"alcohol": "Some"}
        )
    assert PlanVersion.objects.filter(fixture=cup).count() == 2


def test_versions_and_signatures_are_never_rewritten(cup, cast):
    plan = plan_generate(fixture=cup, by=cast["safety"])
    plan.note = "rewritten"
    with pytest.raises(AppendOnlyError):
        plan.save()
    with pytest.raises(AppendOnlyError):
        PlanVersion.objects.filter(pk=plan.pk).update(note="rewritten")


def test_the_api_refuses_a_steward_and_a_bad_count_names_the_field(
    cup, cast, client_for, no_second_factor
):
    safety, steward = client_for("safety"), client_for("steward")
    url = reverse("api:fixture_plan_save", args=[cup.pk])
    assert steward.post(url, {}, content_type="application/json").status_code == 403
    made = safety.post(url, {}, content_type="application/json").json()
    away = away_zone(PlanVersion.objects.get(fixture=cup, number=made["version"]))
    bad = safety.post(
        url,
        {"version": made["version"], "stewards": {away["zone"]: -1}},
        content_type="application/json",
    )
    assert bad.status_code == 400 and bad.json()["field"] == "stewards"
    sign = reverse("api:fixture_plan_sign", args=[cup.pk])
    body = {"version": made["version"]}
    assert steward.post(sign, body, content_type="application/json").status_code == 403
    assert client_for("police").post(sign, body, content_type="application/json").status_code == 201
    again = client_for("police").post(sign, body, content_type="application/json")
    assert again.status_code == 400


def test_the_safety_officer_raises_the_away_stewards_on_the_page(
    cup, cast, client_for, no_second_factor
):
    plan = plan_generate(fixture=cup, by=cast["safety"])
    away = away_zone(plan)
    page = reverse("fixture_plan", args=[cup.pk])

    client_for("safety").post(
        page,
        {
            "action": "save",
            "version": plan.number,
            f"stewards-{away['zone']}": away["stewards"] + 5,
        },
    )
    steward_page = client_for("steward").post(page, {"action": "sign", "version": plan.number + 1})

    current = plan_current(cup)
    assert current.number == plan.number + 1
    assert away_zone(current)["stewards"] == away["stewards"] + 5
    assert steward_page.status_code == 403
    assert not current.sign_offs.exists()
