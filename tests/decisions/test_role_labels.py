"""A role reads as its label (a decision-maker on the decision log and the match report, a plan's
signer on the plan page), never its stored value ("safety_officer", "Safetyofficer")."""

import pytest

from safeground.matches.services import plan_generate, plan_sign

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_second_factor")]


def test_the_decision_log_and_report_show_the_makers_role_label(match_day, client_for):
    cup = match_day.cup_tie
    for maker in ("safety", "police"):
        made = client_for("loggist").post(
            f"/api/fixtures/{cup.pk}/decisions",
            {"decision_maker": maker, "decision": "Hold the away end", "rationale": "Surge"},
            "application/json",
        )
        assert made.status_code == 201, made.content
    for path in (f"/fixtures/{cup.pk}/decisions/", f"/fixtures/{cup.pk}/report/"):
        html = client_for("safety").get(path).content.decode()
        assert "(Safety officer)" in html, path
        assert "(Police commander)" in html, path
        assert "Safetyofficer" not in html and "Policecommander" not in html, path


def test_the_plans_versions_show_the_signers_role_label(match_day, client_for):
    cup, cast = match_day.cup_tie, match_day.cast
    plan = plan_generate(fixture=cup, by=cast["safety"])
    plan_sign(fixture=cup, by=cast["safety"], version=plan.number)
    versions = client_for("safety").get(f"/fixtures/{cup.pk}/plan/").content.decode()
    versions = versions[versions.index("data-versions") :]
    assert f"signed by {cast['safety']} (Safety officer)" in versions
    assert "(safety_officer)" not in versions
