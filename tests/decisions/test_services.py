"""The decision log's rules: both people and both times kept, a late entry says why, an amendment
strikes through in the chain, a review falls due and is answered, the log's visibility rule; the
radio switched down and back up."""

import io
from datetime import timedelta

import pytest
from django.utils import timezone, translation
from pypdf import PdfReader

from safeground.append_only import AppendOnlyError
from safeground.decisions.models import Decision, RadioSwitch
from safeground.decisions.selectors import (
    DEFAULT_FALLBACK,
    broadcast_times,
    decision_log,
    decisions_seen_by,
    radio_is_down,
    radio_periods,
    reviews_due,
)
from safeground.decisions.services import (
    DecisionError,
    DecisionParts,
    decision_amend,
    decision_fields,
    decision_record,
    decision_review,
    digest,
    radio_down,
    radio_restore,
)
from safeground.errors import Forbidden
from safeground.incidents.broadcasting import broadcast_ack
from safeground.incidents.models import Broadcast, LogEntry
from safeground.incidents.posts import steward_post_assign
from safeground.incidents.services import Place, log_entry_append
from safeground.incidents.verify import chain_verify
from tests import factories

pytestmark = pytest.mark.django_db

HOLD = DecisionParts(
    decision="Hold the away supporters in the away end for 20 minutes after full time",
    rationale="Home supporters gathering on the concourse at the top of the lower tier",
    information="Stewards' reports #1; CCTV of the concourse",
    threat_assessment="High: the two groups are within 30 metres",
    powers_policy="Ground regulations; the match plan's segregation measures",
    options_considered="Hold the away end; open the east exits early; escort to the station",
    options_rejected="Open the east exits early: the routes cross outside the ground",
)


@pytest.fixture
def cup(match_day):
    return match_day.cup_tie


def record(cup, cast, **changes):
    parts = changes.pop("parts", HOLD)
    return decision_record(
        fixture=cup, loggist=cast["loggist"], decision_maker=cast["police"], parts=parts, **changes
    )


def test_a_decision_keeps_the_commander_the_loggist_and_both_times(cup, cast) -> None:
    decided = timezone.now() - timedelta(minutes=2)
    decision = record(cup, cast, decided_at=decided)
    entry = decision.entry
    assert entry.kind == LogEntry.Kind.DECISION
    assert decision.decision_maker_name == str(cast["police"])
    assert decision.decision_maker_role == "police_commander"
    assert entry.author_name == str(cast["loggist"])
    assert decision.decided_at == decided == entry.observed_at
    assert entry.logged_at > decided
    # The chain anchors every word: the entry carries the SHA-256 of the decision's parts.
    assert decision.sha256 == digest(decision_fields(decision))
    assert decision.sha256 in entry.note
    assert chain_verify(cup.pk)[1] is None


DELAY = DecisionParts(
    decision="Put the kick-off back 15 minutes",
    rationale="Queues at the away turnstiles: 2,000 still outside at 19:30",
    kickoff_delay=15,
)


def test_a_kick_off_delay_is_a_decision_with_its_reasons_and_moves_the_kick_off(cup, cast) -> None:
    planned = cup.kickoff
    decision = record(cup, cast, parts=DELAY)

    cup.refresh_from_db()
    assert (cup.kickoff, cup.kickoff_delay) == (planned, 15)  # the plan kept, the delay beside it
    assert cup.kickoff_now == planned + timedelta(minutes=15)
    assert decision.kickoff_delay == 15 and "Queues" in decision.rationale
    # The chain anchors the minutes too; a decision about something else keeps its old digest.
    assert decision_fields(decision)["kickoff_delay"] == 15
    assert "kickoff_delay" not in decision_fields(record(cup, cast))
    assert chain_verify(cup.pk)[1] is None

    decision_amend(
        decision=decision,
        loggist=cast["loggist"],
        decision_maker=cast["police"],
        parts=DecisionParts(
            decision="Kick off as planned", rationale="Queues cleared", kickoff_delay=0
        ),
        reason="The gates cleared faster than feared",
    )
    cup.refresh_from_db()
    assert cup.kickoff_now == planned


def test_a_kick_off_delay_past_three_hours_is_refused_and_nothing_is_written(cup, cast) -> None:
    with pytest.raises(DecisionError) as refused:
        record(cup, cast, parts=DecisionParts(decision="Delay", rationale="Fog", kickoff_delay=240))
    assert refused.value.field == "kickoff_delay"
    cup.refresh_from_db()
    assert cup.kickoff_delay == 0 and not Decision.objects.filter(fixture=cup).exists()


def test_a_decision_logged_more_than_5_minutes_late_must_say_why(cup, cast) -> None:
    late = timezone.now() - timedelta(minutes=12)
    with pytest.raises(DecisionError) as refused:
        record(cup, cast, decided_at=late)
    assert refused.value.field == "retrospective_reason"
    assert "12 minutes" in refused.value.message
    assert not Decision.objects.exists()
    done = record(cup, cast, decided_at=late, retrospective_reason="Loggist was at the gates")
    assert done.retrospective_reason == "Loggist was at the gates"


def test_only_a_commander_decides(cup, cast) -> None:
    with pytest.raises(DecisionError) as refused:
        decision_record(
            fixture=cup, loggist=cast["loggist"], decision_maker=cast["spotter"], parts=HOLD
        )
    assert refused.value.field == "decision_maker"
    with pytest.raises(Forbidden):
        decision_record(
            fixture=cup, loggist=cast["steward"], decision_maker=cast["safety"], parts=HOLD
        )


def test_an_amendment_is_a_new_chained_entry_that_strikes_the_old_one_through(cup, cast) -> None:
    first = record(cup, cast)
    changed = DecisionParts(
        decision="Hold the away supporters for 30 minutes after full time",
        rationale="The home crowd has not dispersed",
    )
    second = decision_amend(
        decision=first,
        loggist=cast["loggist"],
        decision_maker=cast["police"],
        parts=changed,
        reason="Crowd still on the concourse at 21:40",
    )
    assert second.amends == first
    assert second.entry.seq > first.entry.seq
    assert f"amends #{first.entry.seq}" in second.entry.note
    first.refresh_from_db()
    assert first.decision == HOLD.decision  # never edited
    with pytest.raises(AppendOnlyError):
        first.save()
    rows = {row.seq: row for row in decision_log(cast["police"], cup)}
    assert rows[first.entry.seq].struck_by == second.entry.seq
    assert rows[second.entry.seq].struck_by is None
    with pytest.raises(DecisionError) as refused:
        decision_amend(
            decision=first,
            loggist=cast["loggist"],
            decision_maker=cast["police"],
            parts=changed,
            reason="again",
        )
    assert refused.value.status == 409
    assert chain_verify(cup.pk)[1] is None


def test_a_review_falls_due_and_is_answered_by_a_chained_entry(cup, cast) -> None:
    now = timezone.now()
    parts = DecisionParts(
        decision="Alcohol ban in the concourses", rationale="Category C-IR", review_at=now
    )
    decision = record(cup, cast, parts=parts, decided_at=now - timedelta(minutes=1))
    assert reviews_due(cast["loggist"], cup, now - timedelta(seconds=30)) == []
    due = reviews_due(cast["loggist"], cup, now + timedelta(seconds=1))
    assert [row.decision for row in due] == [decision]
    review = decision_review(decision=decision, by=cast["loggist"], note="Stands: no change")
    assert review.entry.kind == LogEntry.Kind.DECISION_REVIEW
    assert review.entry.links == [decision.entry.seq]
    assert reviews_due(cast["loggist"], cup, now + timedelta(hours=1)) == []
    assert chain_verify(cup.pk)[1] is None


def test_decisions_are_seen_by_the_organisations_the_match_is_shared_with(match_day, cast):
    cup, league = match_day.cup_tie, match_day.league_match
    record(cup, cast)
    decision_record(
        fixture=cup,
        loggist=cast["loggist"],
        decision_maker=cast["safety"],
        parts=DecisionParts(decision="Club-only staffing change", rationale="x", home_only=True),
    )
    decision_record(
        fixture=league, loggist=cast["loggist"], decision_maker=cast["safety"], parts=HOLD
    )
    # The away club's liaison sees the cup tie's shared decision, not the home-only one.
    assert decisions_seen_by(cast["liaison"], cup).count() == 1
    assert decisions_seen_by(cast["police"], cup).count() == 1
    assert decisions_seen_by(cast["safety"], cup).count() == 2


def test_linked_entries_must_be_in_the_log(cup, cast) -> None:
    report = log_entry_append(
        fixture=cup,
        author=cast["loggist"],
        category="missile",
        text="Seats thrown",
        place=Place(block="S-L2"),
    )
    with pytest.raises(DecisionError) as refused:
        record(cup, cast, parts=DecisionParts(decision="x", rationale="y", links=(999,)))
    assert refused.value.status == 404
    assert refused.value.message == "no entries #999 in this match's log"
    with translation.override("cy"), pytest.raises(DecisionError) as welsh:
        record(cup, cast, parts=DecisionParts(decision="x", rationale="y", links=(998, 999)))
    assert (welsh.value.code, welsh.value.field) == (refused.value.code, "links")
    assert welsh.value.message == "dim cofnodion #998, #999 yn log y gêm hon"
    done = record(cup, cast, parts=DecisionParts(decision="x", rationale="y", links=(report.seq,)))
    assert done.entry.links == [report.seq]


def post_steward(cup, cast) -> None:
    steward_post_assign(
        fixture=cup, steward=cast["steward"], assigned_by=cast["safety"], zone="away-south-cup"
    )


def test_radio_down_logs_a_decision_and_broadcasts_the_fallback(cup, cast) -> None:
    post_steward(cup, cast)
    switch = radio_down(fixture=cup, by=cast["loggist"], decision_maker=cast["safety"])
    assert radio_is_down(cup)
    assert switch.decision.entry.kind == LogEntry.Kind.DECISION
    assert switch.decision.decision_maker == cast["safety"]
    broadcast = Broadcast.objects.get(pk=switch.broadcast_id)
    assert broadcast.recipient_ids == [cast["steward"].pk]
    assert switch.instructions in broadcast.text or broadcast.text.startswith("Radio down")
    with pytest.raises(DecisionError) as refused:
        radio_down(fixture=cup, by=cast["loggist"], decision_maker=cast["safety"])
    assert refused.value.status == 409
    radio_restore(fixture=cup, by=cast["loggist"], decision_maker=cast["safety"])
    assert not radio_is_down(cup)
    periods = radio_periods(cup)
    assert len(periods) == 1 and periods[0].ended is not None
    assert RadioSwitch.objects.count() == 2
    assert chain_verify(cup.pk)[1] is None


def test_radio_down_without_a_plan_gives_the_green_guide_fallback(cup, cast) -> None:
    switch = radio_down(fixture=cup, by=cast["safety"], decision_maker=cast["safety"])
    assert switch.instructions == DEFAULT_FALLBACK
    assert switch.broadcast is None  # nobody posted yet: the banner and the decision stand


def test_broadcast_times_give_the_median_and_the_worst_acknowledgement(cup, cast) -> None:
    post_steward(cup, cast)
    radio_down(fixture=cup, by=cast["loggist"], decision_maker=cast["safety"])
    broadcast = Broadcast.objects.get()
    broadcast_ack(broadcast=broadcast, user=cast["steward"])
    (times,) = broadcast_times(cup)
    assert times.recipients == 1 and times.acknowledged == 1
    assert times.median_ack is not None and times.worst_ack == times.median_ack


def test_the_decision_log_prints(cup, cast, client_for, no_second_factor) -> None:
    first = record(cup, cast)
    decision_amend(
        decision=first,
        loggist=cast["loggist"],
        decision_maker=cast["police"],
        parts=DecisionParts(decision="Hold for 30 minutes", rationale="Crowd still there"),
        reason="Crowd still on the concourse",
    )
    response = client_for("police").get(f"/fixtures/{cup.pk}/decisions.pdf")
    assert response.status_code == 200
    text = " ".join(p.extract_text() for p in PdfReader(io.BytesIO(response.content)).pages)
    text = " ".join(text.split())
    assert "Hold the away supporters" in text
    assert f"amended by #{first.entry.seq + 1}" in text
    assert str(cast["police"]) in text and str(cast["loggist"]) in text


def test_a_case_bundle_carries_the_decisions_that_cite_its_entries(cup, cast, tmp_path) -> None:
    import json
    import zipfile

    from safeground.casework.bundle import bundle_verify
    from safeground.casework.services import case_bundle_export

    case = factories.case(cup, title="Concourse stand-off")
    entry = case.entries.get()
    cited = record(
        cup,
        cast,
        parts=DecisionParts(
            decision="Riot police into the concourse", rationale="Stand-off", links=(entry.seq,)
        ),
    )
    record(cup, cast, parts=DecisionParts(decision="Unrelated", rationale="x"))
    data = case_bundle_export(case=case, by=cast["police"]).read()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        decisions = json.loads(zf.read("decisions.json"))
    assert [(d["seq"], d["hash"]) for d in decisions] == [(cited.entry.seq, cited.entry.hash)]
    path = tmp_path / "case.zip"
    path.write_bytes(data)
    assert bundle_verify(path).ok  # listed in the manifest with its SHA-256


def test_the_demo_derby_has_its_real_decisions(settings, db) -> None:
    from safeground.demo.season import demo_load
    from safeground.matches.models import Fixture

    settings.SAFEGROUND_DEMO_HISTORY = True
    demo_load()
    cup = Fixture.objects.get(away_club__name="Chelsea", stage="Fourth round")
    decisions = {d.decision: d for d in Decision.objects.filter(fixture=cup)}
    assert len(decisions) == 3
    riot = decisions["Riot police (public order unit) into the south lower concourse"]
    assert riot.decision_maker.username == "police" and riot.entry.author.username == "loggist"
    assert riot.links  # the arrests on the concourse
    assert all(d.retrospective_reason for d in decisions.values())
    assert any("alcohol" in text for text in decisions)
    assert any(text.startswith("Hold the away supporters") for text in decisions)
    assert chain_verify(cup.pk)[1] is None
