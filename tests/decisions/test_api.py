"""The decision log's API and pages: the one error shape naming the field, the log's visibility
for a shared and an unshared organisation, the report's part."""

from datetime import timedelta

import pytest
from django.utils import timezone

from safeground.decisions.models import Decision
from safeground.decisions.services import DecisionParts, decision_record, radio_down, radio_restore
from safeground.incidents.broadcasting import broadcast_ack
from safeground.incidents.models import Broadcast
from safeground.incidents.posts import steward_post_assign

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_second_factor")]

BODY = {"decision_maker": "police", "decision": "Hold the away end", "rationale": "Surge"}


def url(fixture, path: str = "") -> str:
    return f"/api/fixtures/{fixture.pk}/decisions{path}"


def test_a_late_decision_without_its_reason_is_refused_naming_the_field(match_day, client_for):
    cup = match_day.cup_tie
    late = (timezone.now() - timedelta(minutes=9)).isoformat()
    refused = client_for("loggist").post(url(cup), {**BODY, "decided_at": late}, "application/json")
    assert refused.status_code == 409
    assert (refused.json()["code"], refused.json()["field"]) == (
        "decision_refused",
        "retrospective_reason",
    )
    made = client_for("loggist").post(
        url(cup),
        {**BODY, "decided_at": late, "retrospective_reason": "Written up after the surge"},
        "application/json",
    )
    assert made.status_code == 201
    body = made.json()
    assert (body["decision_maker_role"], body["retrospective_reason"]) == (
        "police_commander",
        "Written up after the surge",
    )
    assert body["loggist"] != body["decision_maker"]


def test_a_decision_maker_who_is_no_commander_is_refused(match_day, client_for):
    refused = client_for("loggist").post(
        url(match_day.cup_tie), {**BODY, "decision_maker": "spotter"}, "application/json"
    )
    assert (refused.status_code, refused.json()["field"]) == (409, "decision_maker")
    unknown = client_for("loggist").post(
        url(match_day.cup_tie), {**BODY, "decision_maker": "nobody"}, "application/json"
    )
    assert (unknown.status_code, unknown.json()["field"]) == (404, "decision_maker")


def test_the_log_is_seen_by_a_shared_organisation_not_an_unshared_one(match_day, client_for):
    cast, cup, league = match_day.cast, match_day.cup_tie, match_day.league_match
    for fixture in (cup, league):
        decision_record(
            fixture=fixture,
            loggist=cast["loggist"],
            decision_maker=cast["safety"],
            parts=DecisionParts(decision=f"Hold at {fixture.pk}", rationale="Surge"),
        )
    # The away club works the cup tie (shared with it), not the league match.
    seen = client_for("liaison").get(url(cup))
    assert seen.status_code == 200 and [d["decision"] for d in seen.json()] == [f"Hold at {cup.pk}"]
    assert client_for("liaison").get(url(league)).status_code == 403  # not its match
    assert client_for("steward").get(url(cup)).status_code == 403
    assert len(client_for("police").get(url(league)).json()) == 1


def test_the_post_match_report_gives_acknowledgement_times_radio_periods_and_decisions(
    match_day, client_for
):
    cast, cup = match_day.cast, match_day.cup_tie
    steward_post_assign(
        fixture=cup, steward=cast["steward"], assigned_by=cast["safety"], zone="away-south-cup"
    )
    radio_down(fixture=cup, by=cast["loggist"], decision_maker=cast["safety"])
    broadcast_ack(broadcast=Broadcast.objects.get(), user=cast["steward"])
    radio_restore(fixture=cup, by=cast["loggist"], decision_maker=cast["safety"])
    page = client_for("safety").get(f"/fixtures/{cup.pk}/report/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "data-radio-periods" in html and "data-broadcast-times" in html
    assert "1 of 1" in html
    assert Decision.objects.count() == 2
    assert "Radio down: work to the fallback communications plan" in html


def test_a_form_error_names_the_late_field_on_the_page(match_day, client_for):
    cup = match_day.cup_tie
    police = match_day.cast["police"]
    late = timezone.localtime(timezone.now() - timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M")
    page = client_for("loggist").post(
        f"/fixtures/{cup.pk}/decisions/",
        {"decision_maker": police.pk, "decided_at": late, "decision": "Hold", "rationale": "x"},
    )
    assert page.status_code == 409  # the clock refuses it, as the API does (ADR 0021)
    form = page.context["form"]
    assert "retrospective_reason" in form.errors
    assert not Decision.objects.exists()


def test_a_decision_past_its_review_time_is_amended_without_copying_that_time(
    match_day, client_for
):
    cup, cast = match_day.cup_tie, match_day.cast
    decision = decision_record(
        fixture=cup,
        loggist=cast["loggist"],
        decision_maker=cast["police"],
        # Logged late: its review time has come and gone.
        parts=DecisionParts(
            decision="Hold", rationale="Surge", review_at=timezone.now() - timedelta(minutes=10)
        ),
        decided_at=timezone.now() - timedelta(minutes=30),
        retrospective_reason="Written up after the surge",
    )
    loggist = client_for("loggist")
    amend = f"/fixtures/{cup.pk}/decisions/{decision.pk}/amend/"
    form = loggist.get(amend).context["form"]
    assert form["review_at"].value() is None
    assert "has passed: give a new one, or leave it empty" in form.fields["review_at"].help_text

    posted = {
        "reason": "Second unit arrived",
        "decision_maker": cast["police"].pk,
        "decision": "Hold longer",
        "rationale": "Surge",
    }
    assert loggist.post(amend, posted).status_code == 302
    assert Decision.objects.get(amends=decision).review_at is None

    # A past review time typed in is refused with the time it must follow.
    past = timezone.localtime(timezone.now() - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M")
    amendment = Decision.objects.get(amends=decision)
    refused = loggist.post(
        f"/fixtures/{cup.pk}/decisions/{amendment.pk}/amend/", {**posted, "review_at": past}
    )
    assert refused.status_code == 409  # refused by the clock, as the API refuses it
    assert "must be after the time decided (" in refused.context["form"].errors["review_at"][0]
