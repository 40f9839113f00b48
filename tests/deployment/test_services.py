"""Deployment's writes: checks made from the checklist, check-in at a post, results at the post
(append-only, photos with their SHA-256), sending back, and marking the plan ready."""

import hashlib

import pytest
import yaml
from django.core.files.uploadedfile import SimpleUploadedFile

from safeground.append_only import AppendOnlyError
from safeground.deployment.checklist import ChecklistRefused, checklist_for
from safeground.deployment.models import CheckIn, CheckResult, MatchCheck, PlanReady
from safeground.deployment.selectors import check_states, completion, deployment_board
from safeground.deployment.services import (
    DeploymentError,
    PlanNotReady,
    check_record,
    check_send_back,
    checks_prepare,
    plan_mark_ready,
    steward_check_in,
)
from safeground.errors import Forbidden, SafegroundError
from safeground.matches.services import plan_revise
from tests import factories

pytestmark = pytest.mark.django_db

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


@pytest.fixture
def cup(match_day):
    return match_day.cup_tie


def away_zone(fixture):
    return fixture.zones.get(use="away").zone


def at_zone(checks, zone):
    return [c for c in checks if c.zone_id == zone.pk]


# --- the checks ---------------------------------------------------------------------------------


def test_each_item_is_made_once_at_each_place_of_the_match(cup) -> None:
    checklist = checklist_for(cup.ground)
    places = {
        "zone": cup.zones.count(),
        "gate": cup.ground.gates.count(),
        "concourse": cup.ground.concourses.count(),
    }
    made = checks_prepare(fixture=cup)
    assert len(made) == sum(places[item.at] for item in checklist.items)
    assert checks_prepare(fixture=cup) == []  # again: nothing missing, nothing twice
    by_item = {item.code: item for item in checklist.items}
    for check in MatchCheck.objects.filter(fixture=cup):
        item = by_item[check.item]
        assert (check.name, check.critical, check.area) == (item.name, item.critical, item.area)
        assert getattr(check, f"{item.at}_id") is not None


def test_a_bad_checklist_makes_no_checks(cup, settings, tmp_path) -> None:
    (tmp_path / f"{cup.ground.code}.yaml").write_text(yaml.safe_dump({"items": [{"code": "x"}]}))
    settings.SAFEGROUND_CHECKLIST_DIR = str(tmp_path)
    with pytest.raises(ChecklistRefused, match=r"items\[0\]\.name"):
        checks_prepare(fixture=cup)
    assert not MatchCheck.objects.exists()


# --- check-in -----------------------------------------------------------------------------------


def test_a_posted_steward_checks_in_once_at_each_post(match_day, cup) -> None:
    steward = match_day.cast["steward"]
    first_post = factories.post(cup, steward)
    check_in = steward_check_in(fixture=cup, steward=steward)
    assert (check_in.post, check_in.steward) == (first_post, steward)
    assert steward_check_in(fixture=cup, steward=steward) == check_in  # a second tap: the same
    board = deployment_board(cup)
    assert [row.checked_in_at for row in board.posted] == [check_in.checked_in_at]

    # Moved to a gate, the steward is not checked in until they check in there.
    factories.post(cup, steward, gate="F")
    assert [row.checked_in_at for row in deployment_board(cup).posted] == [None]
    steward_check_in(fixture=cup, steward=steward)
    assert CheckIn.objects.filter(steward=steward).count() == 2


def test_a_steward_without_a_post_cannot_check_in_and_others_never_do(match_day, cup) -> None:
    with pytest.raises(DeploymentError, match="no post"):
        steward_check_in(fixture=cup, steward=match_day.cast["steward"])
    with pytest.raises(Forbidden):
        steward_check_in(fixture=cup, steward=match_day.cast["loggist"])
    assert not CheckIn.objects.exists()


# --- results ------------------------------------------------------------------------------------


def test_a_steward_records_the_checks_at_their_post_only(match_day, cup) -> None:
    steward = match_day.cast["steward"]
    factories.post(cup, steward)
    checks = factories.checks(cup)
    mine = at_zone(checks, away_zone(cup))
    elsewhere = next(c for c in checks if c not in mine)
    result = check_record(check=mine[0], by=steward, outcome="pass")
    assert (result.outcome, result.by, result.photo.name) == ("pass", steward, "")
    with pytest.raises(DeploymentError, match="not at your post"):
        check_record(check=elsewhere, by=steward, outcome="pass")
    # A supervisor records at any post.
    check_record(check=elsewhere, by=match_day.cast["supervisor"], outcome="pass")
    assert CheckResult.objects.count() == 2


def test_a_failure_says_what_is_wrong_and_bad_input_writes_nothing(match_day, cup) -> None:
    steward = match_day.cast["steward"]
    factories.post(cup, steward)
    check = at_zone(factories.checks(cup), away_zone(cup))[0]
    with pytest.raises(DeploymentError, match="say what is wrong") as refused:
        check_record(check=check, by=steward, outcome="fail", note="  ")
    assert (refused.value.field, refused.value.code) == ("note", "deployment_refused")
    with pytest.raises(DeploymentError) as refused:
        check_record(check=check, by=steward, outcome="maybe")
    assert refused.value.field == "outcome"
    text = SimpleUploadedFile("notes.txt", b"not an image", content_type="text/plain")
    with pytest.raises(DeploymentError) as refused:
        check_record(check=check, by=steward, outcome="pass", photo=text)
    assert refused.value.field == "photo"
    assert not CheckResult.objects.exists()


def test_a_photo_is_kept_with_its_sha256(match_day, cup) -> None:
    steward = match_day.cast["steward"]
    factories.post(cup, steward)
    check = at_zone(factories.checks(cup), away_zone(cup))[0]
    photo = SimpleUploadedFile("barrier.png", PNG, content_type="image/png")
    result = check_record(check=check, by=steward, outcome="fail", note="Rail loose", photo=photo)
    assert result.photo_sha256 == hashlib.sha256(PNG).hexdigest()
    assert result.photo_type == "image/png"
    with result.photo.open("rb") as stored:
        assert hashlib.sha256(stored.read()).hexdigest() == result.photo_sha256


def test_results_are_append_only_and_the_latest_is_the_state(match_day, cup) -> None:
    steward, supervisor = match_day.cast["steward"], match_day.cast["supervisor"]
    factories.post(cup, steward)
    check = at_zone(factories.checks(cup), away_zone(cup))[0]
    failed = check_record(check=check, by=steward, outcome="fail", note="Gangway blocked")
    check_record(check=check, by=steward, outcome="pass", note="Cleared")
    state = next(s for s in check_states(cup) if s.check == check)
    assert (state.state, len(state.results), state.results[0]) == ("pass", 2, failed)
    failed.note = "edited"
    with pytest.raises(AppendOnlyError):
        failed.save()
    with pytest.raises(AppendOnlyError):
        CheckResult.objects.filter(pk=failed.pk).update(note="edited")

    # Sent back by the supervisor: not done again until someone checks it.
    check_send_back(check=check, by=supervisor, note="Look at the rail by row K")
    state = next(s for s in check_states(cup) if s.check == check)
    assert (state.state, state.done, state.blocks_ready) == ("recheck", False, check.critical)


def test_only_a_done_check_goes_back_and_only_by_a_supervisor(match_day, cup) -> None:
    steward, supervisor = match_day.cast["steward"], match_day.cast["supervisor"]
    factories.post(cup, steward)
    check = at_zone(factories.checks(cup), away_zone(cup))[0]
    with pytest.raises(DeploymentError, match="not done yet"):
        check_send_back(check=check, by=supervisor, note="again")
    check_record(check=check, by=steward, outcome="pass")
    with pytest.raises(Forbidden):
        check_send_back(check=check, by=steward, note="again")
    with pytest.raises(DeploymentError) as refused:
        check_send_back(check=check, by=supervisor, note="")
    assert refused.value.field == "note"
    assert CheckResult.objects.count() == 1


# --- the plan marked ready ----------------------------------------------------------------------


def all_passed(checks, by) -> None:
    for check in checks:
        factories.check_done(check, by)


def comms_passed(cup, cast) -> None:
    """The communications check passed: the steward checked in and acknowledged the test alert."""
    from safeground.deployment.comms import comms_check_send
    from safeground.incidents.broadcasting import broadcast_ack

    factories.post(cup, cast["steward"])
    steward_check_in(fixture=cup, steward=cast["steward"])
    sent = comms_check_send(fixture=cup, by=cast["loggist"])
    broadcast_ack(broadcast=sent.broadcast, user=cast["steward"])


def test_a_failed_critical_check_blocks_ready_unless_overridden_with_a_reason(
    match_day, cup
) -> None:
    safety, supervisor = match_day.cast["safety"], match_day.cast["supervisor"]
    plan = factories.plan_signed_off(cup, match_day.cast)
    comms_passed(cup, match_day.cast)
    checks = factories.checks(cup)
    critical = next(c for c in checks if c.critical)
    all_passed([c for c in checks if c != critical], supervisor)
    factories.check_done(critical, supervisor, outcome="fail", note="Exit gate chained")

    with pytest.raises(PlanNotReady) as refused:
        plan_mark_ready(fixture=cup, by=safety)
    assert (refused.value.field, refused.value.status) == ("override_reason", 409)
    assert f"{critical.name} at {critical.place}" in refused.value.message
    assert not PlanReady.objects.exists()

    ready = plan_mark_ready(fixture=cup, by=safety, override_reason="  Gate G used instead  ")
    assert (ready.version, ready.by, ready.override_reason) == (plan, safety, "Gate G used instead")
    assert ready.open_critical == [
        {"check": critical.pk, "name": critical.name, "place": str(critical.place), "state": "fail"}
    ]
    assert deployment_board(cup).ready == ready
    with pytest.raises(AppendOnlyError):
        PlanReady.objects.filter(pk=ready.pk).update(override_reason="")


def test_a_critical_check_not_done_blocks_ready_and_a_non_critical_failure_does_not(
    match_day, cup
) -> None:
    safety, supervisor = match_day.cast["safety"], match_day.cast["supervisor"]
    factories.plan_signed_off(cup, match_day.cast)
    with pytest.raises(PlanNotReady, match="not prepared"):
        plan_mark_ready(fixture=cup, by=safety)
    comms_passed(cup, match_day.cast)
    checks = factories.checks(cup)
    critical = [c for c in checks if c.critical]
    all_passed(critical[1:], supervisor)
    with pytest.raises(PlanNotReady, match="1 critical checks"):
        plan_mark_ready(fixture=cup, by=safety)
    all_passed(critical[:1], supervisor)
    minor = next(c for c in checks if not c.critical)
    factories.check_done(minor, supervisor, outcome="fail", note="PA crackles")
    assert completion(check_states(cup)).open_critical == []
    ready = plan_mark_ready(fixture=cup, by=safety, override_reason="not needed")
    assert (ready.override_reason, ready.open_critical) == ("", [])  # nothing was overridden


def test_only_the_safety_officer_marks_ready_and_only_a_signed_off_plan(match_day, cup) -> None:
    cast = match_day.cast
    checks = factories.checks(cup)
    all_passed(checks, cast["supervisor"])
    with pytest.raises(DeploymentError, match="no plan"):
        plan_mark_ready(fixture=cup, by=cast["safety"])
    plan = factories.plan_signed_off(cup, cast)
    for name in ("steward", "supervisor", "loggist", "police"):
        with pytest.raises(Forbidden):
            plan_mark_ready(fixture=cup, by=cast[name], override_reason="because")
    revised = plan_revise(
        fixture=cup, by=cast["safety"], based_on=plan.number, note="More", first_aiders=99
    )
    with pytest.raises(DeploymentError, match=f"version {revised.number} is not signed off"):
        plan_mark_ready(fixture=cup, by=cast["safety"])
    assert not PlanReady.objects.exists()


def test_a_ready_mark_lapses_when_the_plan_changes(match_day, cup) -> None:
    cast = match_day.cast
    plan = factories.plan_signed_off(cup, cast)
    all_passed(factories.checks(cup), cast["supervisor"])
    comms_passed(cup, cast)
    plan_mark_ready(fixture=cup, by=cast["safety"])
    assert deployment_board(cup).ready is not None
    plan_revise(fixture=cup, by=cast["safety"], based_on=plan.number, first_aiders=99)
    assert deployment_board(cup).ready is None


# --- the board ----------------------------------------------------------------------------------


def test_the_board_sets_the_plan_beside_the_stewards_posted(match_day, cup) -> None:
    cast = match_day.cast
    plan = factories.plan_signed_off(cup, cast)
    away = away_zone(cup)
    factories.post(cup, cast["steward"])
    factories.post(cup, cast["supervisor"], gate="F")
    steward_check_in(fixture=cup, steward=cast["steward"])
    board = deployment_board(cup)
    planned = {row["zone"]: row["stewards"] for row in plan.stewards}
    rows = {row.zone: row for row in board.zones}
    assert set(rows) == set(planned)
    assert (rows[away.code].planned, rows[away.code].posted) == (planned[away.code], 1)
    assert rows[away.code].checked_in == 1
    assert rows[away.code].short == planned[away.code] - 1
    assert all(row.posted == 0 for code, row in rows.items() if code != away.code)
    assert [row.username for row in board.elsewhere] == ["supervisor"]
    assert [row.username for row in board.not_checked_in] == ["supervisor"]
    assert board.not_posted == []  # the cast has one steward and one supervisor, both posted


def test_checks_of_a_zone_the_match_no_longer_uses_leave_the_count(match_day, cup) -> None:
    checks = factories.checks(cup)
    buffer = cup.zones.get(use="buffer")
    left = [c for c in checks if c.zone_id == buffer.zone_id]
    assert left
    buffer.delete()  # the layout changed (matches.services._zones_set replaces the zones)
    states = check_states(cup)
    assert completion(states).total == len(checks) - len(left)
    assert {s.check.pk for s in states}.isdisjoint(c.pk for c in left)
    assert MatchCheck.objects.filter(pk__in=[c.pk for c in left]).count() == len(left)  # kept


def test_the_communications_check_blocks_ready_until_every_steward_checked_in_acknowledges(
    match_day, cup
) -> None:
    from safeground.deployment.comms import comms_check_send, comms_state
    from safeground.incidents.broadcasting import broadcast_ack

    cast = match_day.cast
    factories.plan_signed_off(cup, cast)
    all_passed(factories.checks(cup), cast["supervisor"])
    factories.post(cup, cast["steward"])
    factories.post(cup, cast["supervisor"], gate="F")
    with pytest.raises(SafegroundError, match="no steward has checked in"):
        comms_check_send(fixture=cup, by=cast["loggist"])
    steward_check_in(fixture=cup, steward=cast["steward"])
    with pytest.raises(Forbidden):
        comms_check_send(fixture=cup, by=cast["steward"])
    sent = comms_check_send(fixture=cup, by=cast["loggist"])
    # Every posted phone gets the alert; the steward checked in is the one who must answer.
    assert set(sent.broadcast.recipient_ids) == {cast["steward"].pk, cast["supervisor"].pk}
    assert sent.expected_ids == [cast["steward"].pk]
    with pytest.raises(PlanNotReady, match="Communications check"):
        plan_mark_ready(fixture=cup, by=cast["safety"])
    broadcast_ack(broadcast=sent.broadcast, user=cast["steward"])
    state = comms_state(cup)
    assert state.passed and state.recipients[0].acked_at is not None
    ready = plan_mark_ready(fixture=cup, by=cast["safety"])
    assert ready.open_critical == []
