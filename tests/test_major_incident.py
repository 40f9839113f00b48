"""A major incident declared in JESIP's words (issue 41, item 3): only a commander declares it,
its M/ETHANE report is chained in the match's log (verify-log still passes), goes live to every
partner working the match and as a push alert to the commanders; a correction is a new report
that keeps the old one and strikes its changed parts through."""

import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from safeground.alerts.models import Alert
from safeground.decisions.models import MethaneReport
from safeground.decisions.selectors import methane_history, methane_latest
from safeground.decisions.services import (
    DecisionError,
    digest,
    major_incident_declare,
    methane_correct,
    methane_fields,
)
from safeground.errors import Forbidden
from safeground.incidents.models import LogEntry
from safeground.incidents.verify import chain_verify
from safeground.live import catalogue
from safeground.live.events import Viewer, capture_events

pytestmark = pytest.mark.django_db

METHANE = {
    "major_incident": "Yes: major incident declared",
    "exact_location": "South stand, lower tier, block S-L2",
    "incident_type": "Crush at the front of the lower tier",
    "hazards": "Barrier failed; crowd still pressing",
    "access": "Gate 4 from Mill Lane; RVP the north car park",
    "casualties": "About 12, 3 serious",
    "emergency_services": "Police, ambulance present; fire and more ambulances required",
}


@pytest.fixture
def cup(match_day):
    return match_day.cup_tie


@pytest.fixture
def sent(django_capture_on_commit_callbacks):
    """The events committed while the block runs, and the after-commit hooks run."""
    from contextlib import contextmanager

    @contextmanager
    def sent_():
        with capture_events() as events, django_capture_on_commit_callbacks(execute=True):
            yield events

    return sent_


def declare(cup, cast, who="safety", **changes):
    return major_incident_declare(fixture=cup, by=cast[who], parts={**METHANE, **changes})


# --- who declares --------------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["loggist", "steward", "supervisor", "spotter", "liaison"])
def test_only_a_commander_declares(cup, cast, who) -> None:
    with pytest.raises(Forbidden):
        declare(cup, cast, who)
    assert not MethaneReport.objects.exists()
    assert not LogEntry.objects.filter(fixture=cup).exists()


def test_the_police_commander_declares_in_their_role(cup, cast) -> None:
    report = declare(cup, cast, "police")
    assert (report.made_by_role, report.made_by_name) == ("police_commander", str(cast["police"]))


@pytest.mark.parametrize("who", ["loggist", "steward"])
def test_the_declare_page_refuses_whoever_may_not(cup, cast, client_for, no_second_factor, who):
    url = reverse("major_incident_declare", args=[cup.pk])
    client = client_for(who)
    assert client.get(url).status_code == 403
    assert client.post(url, METHANE).status_code == 403
    assert not MethaneReport.objects.exists()


def test_the_control_room_offers_the_button_to_commanders_alone(
    cup, cast, client_for, no_second_factor
) -> None:
    banner = reverse("decisions_banner", args=[cup.pk])
    assert b"data-declare-major-incident" in client_for("safety").get(banner).content
    assert b"data-declare-major-incident" not in client_for("loggist").get(banner).content


# --- what it says ------------------------------------------------------------------------------


@pytest.mark.parametrize("part", ["major_incident", "exact_location", "incident_type"])
def test_a_part_it_cannot_go_without_is_named_when_empty(cup, cast, part) -> None:
    with pytest.raises(DecisionError) as refused:
        declare(cup, cast, **{part: "   "})
    assert (refused.value.field, refused.value.status) == (part, 400)
    assert not MethaneReport.objects.exists()


def test_a_part_too_long_for_a_line_is_named(cup, cast) -> None:
    with pytest.raises(DecisionError) as refused:
        declare(cup, cast, hazards="x" * 201)
    assert refused.value.field == "hazards"
    assert "200" in refused.value.message


def test_an_unknown_part_is_named(cup, cast) -> None:
    with pytest.raises(DecisionError) as refused:
        declare(cup, cast, weather="rain")
    assert refused.value.field == "weather"


def test_the_form_names_the_empty_part(cup, cast, client_for, no_second_factor) -> None:
    response = client_for("safety").post(
        reverse("major_incident_declare", args=[cup.pk]), {**METHANE, "exact_location": ""}
    )
    assert response.status_code == 400
    form = response.context["form"]
    assert list(form.errors) == ["exact_location"]
    assert not MethaneReport.objects.exists()


def test_a_second_declaration_is_refused_the_first_is_corrected(cup, cast) -> None:
    first = declare(cup, cast)
    with pytest.raises(DecisionError) as refused:
        declare(cup, cast, "police")
    assert refused.value.status == 409
    assert f"#{first.entry.seq}" in refused.value.message


def test_once_declared_the_declare_page_leads_to_the_report(
    cup, cast, client_for, no_second_factor
) -> None:
    declare(cup, cast)
    client = client_for("police")
    response = client.get(reverse("major_incident_declare", args=[cup.pk]))
    assert response.status_code == 302
    assert response["Location"] == reverse("major_incident", args=[cup.pk])
    response = client.post(reverse("major_incident_declare", args=[cup.pk]), METHANE)
    assert response.status_code == 409
    assert "already declared" in str(response.context["form"].errors["major_incident"])


def test_parts_in_methane_order(cup, cast) -> None:
    report = declare(cup, cast)
    keys = [key for key, _label, _text in report.parts()]
    assert keys == [
        "major_incident",
        "exact_location",
        "incident_type",
        "hazards",
        "access",
        "casualties",
        "emergency_services",
    ]
    assert [text for _k, _l, text in report.parts()] == list(METHANE.values())
    assert report.parts()[5][1] == "Number of casualties"
    assert report.home_only is False and report.corrects is None


def test_the_model_and_the_form_follow_the_parts_table(cup) -> None:
    from safeground.decisions.forms import MethaneForm
    from safeground.decisions.parts import METHANE_MAX, METHANE_PARTS

    form = MethaneForm(places=[])
    assert list(form.fields) == [p.key for p in METHANE_PARTS]
    for p in METHANE_PARTS:
        column = MethaneReport._meta.get_field(p.key)
        assert (column.verbose_name, column.max_length) == (p.label, METHANE_MAX)
        assert column.blank is not p.required
        assert form.fields[p.key].required is p.required
        assert form.fields[p.key].label == f"{p.letter} · {p.label}"


# --- the chain -----------------------------------------------------------------------------------


def test_it_is_chained_and_verify_log_still_passes(cup, cast) -> None:
    report = declare(cup, cast)
    entry = report.entry
    assert entry.kind == LogEntry.Kind.MAJOR_INCIDENT
    assert report.sha256 == digest(methane_fields(report)) and report.sha256 in entry.note
    assert "E: South stand, lower tier, block S-L2" in entry.text
    correction = methane_correct(
        report=report, by=cast["police"], parts={"casualties": "15, 4 serious"}, reason="Recount"
    )
    assert correction.entry.seq == entry.seq + 1
    assert f"corrects #{entry.seq}" in correction.entry.note
    assert chain_verify(cup.pk)[1] is None
    call_command("checkpoint", match=cup.pk, full_time=True)  # the match is long over
    call_command("verify_log", match=cup.pk)  # raises CommandError on a broken chain


def test_a_report_is_never_edited(cup, cast) -> None:
    from safeground.append_only import AppendOnlyError

    report = declare(cup, cast)
    with pytest.raises(AppendOnlyError):
        MethaneReport.objects.filter(pk=report.pk).update(hazards="none")


# --- corrected ---------------------------------------------------------------------------------


def test_a_correction_keeps_the_old_report_and_strikes_its_changed_part(cup, cast) -> None:
    report = declare(cup, cast)
    correction = methane_correct(
        report=report,
        by=cast["police"],
        parts={"casualties": "15, 4 serious"},
        reason="Ambulance recount",
    )
    report.refresh_from_db()
    assert report.casualties == "About 12, 3 serious"  # kept as it was
    assert correction.corrects == report
    assert correction.casualties == "15, 4 serious"
    assert correction.exact_location == METHANE["exact_location"]  # the rest as it was
    assert methane_latest(cup) == correction
    latest, old = methane_history(cup)
    assert latest.report == correction and old.report == report
    assert [line.key for line in old.lines if line.struck] == ["casualties"]
    (was,) = [line.was for line in latest.lines if line.was]
    assert was == [("About 12, 3 serious", correction)]


def test_a_correction_says_why_changes_something_and_corrects_the_latest(cup, cast) -> None:
    report = declare(cup, cast)
    with pytest.raises(DecisionError) as refused:
        methane_correct(report=report, by=cast["safety"], parts={"hazards": "Fire"}, reason=" ")
    assert refused.value.field == "reason"
    with pytest.raises(DecisionError) as refused:
        methane_correct(report=report, by=cast["safety"], parts=dict(METHANE), reason="Again")
    assert "nothing is changed" in refused.value.message
    with pytest.raises(DecisionError) as refused:
        methane_correct(report=report, by=cast["safety"], parts={"incident_type": ""}, reason="x")
    assert refused.value.field == "incident_type"
    methane_correct(report=report, by=cast["safety"], parts={"hazards": "Fire"}, reason="Seen")
    with pytest.raises(DecisionError) as refused:
        methane_correct(report=report, by=cast["safety"], parts={"hazards": "Smoke"}, reason="x")
    assert refused.value.status == 409
    with pytest.raises(Forbidden):
        methane_correct(
            report=methane_latest(cup), by=cast["loggist"], parts={"hazards": "Smoke"}, reason="x"
        )
    assert MethaneReport.objects.count() == 2


def test_the_page_strikes_the_old_part_through(cup, cast, client_for, no_second_factor) -> None:
    report = declare(cup, cast)
    client = client_for("police")
    response = client.post(
        reverse("methane_correct", args=[cup.pk, report.pk]),
        {**METHANE, "access": "Gate 6 from Station Road", "reason": "Gate 4 blocked"},
    )
    assert response.status_code == 302
    page = client_for("liaison").get(reverse("major_incident", args=[cup.pk])).content.decode()
    assert "<del data-was>Gate 4 from Mill Lane; RVP the north car park</del>" in page
    assert "Gate 4 blocked" in page and "Gate 6 from Station Road" in page


# --- live, and the push alert --------------------------------------------------------------------


def test_a_live_event_to_every_partner_working_the_match(cup, cast, sent) -> None:
    with sent() as events:
        report = declare(cup, cast)
    (event,) = [e for e in events if e.type == catalogue.MAJOR_INCIDENT]
    data = json.loads(event.frame)["data"]
    catalogue.PUBLISHED[catalogue.MAJOR_INCIDENT].model_validate(data)
    assert (data["id"], data["seq"], data["action"]) == (report.pk, report.entry.seq, "declared")
    assert not event.audience.home_only  # the police and the away club too
    with sent() as events:
        methane_correct(report=report, by=cast["safety"], parts={"hazards": "Fire"}, reason="x")
    (event,) = [e for e in events if e.type == catalogue.MAJOR_INCIDENT]
    data = json.loads(event.frame)["data"]
    assert (data["action"], data["corrects"]) == ("corrected", report.pk)
    away = Viewer(cast["liaison"].pk, frozenset(), frozenset({"safety_officer"}), False)
    assert event.audience.admits(away)


def test_a_push_alert_to_the_commanders(cup, cast, sent) -> None:
    with sent():
        report = declare(cup, cast)
    alert = Alert.objects.get(kind=Alert.Kind.MAJOR_INCIDENT)
    assert alert.entry == report.entry and alert.urgent
    assert alert.title == "Major incident declared"
    assert "E: South stand, lower tier, block S-L2" in alert.body
    told = set(alert.recipients.values_list("user__username", flat=True))
    assert told == {"safety", "police", "loggist"}
    with sent():
        methane_correct(report=report, by=cast["police"], parts={"hazards": "Fire"}, reason="x")
    assert Alert.objects.filter(kind=Alert.Kind.MAJOR_INCIDENT).count() == 2


def test_nothing_is_pushed_for_a_refused_declaration(cup, cast, sent) -> None:
    with sent(), pytest.raises(DecisionError):
        declare(cup, cast, exact_location="")
    assert not Alert.objects.exists()


# --- at once (PostgreSQL) ------------------------------------------------------------------------


def at_once(*calls):
    """Run the calls in threads released together; what each returned or raised."""
    import threading

    from django.db import connections

    start = threading.Barrier(len(calls))
    results: list[object] = [None] * len(calls)

    def run(n: int) -> None:
        try:
            start.wait()
            results[n] = calls[n]()
        except Exception as exc:  # kept, and asserted on below
            results[n] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


@pytest.mark.django_db(transaction=True)
def test_two_commanders_at_once_one_declares_the_other_is_told(match_day) -> None:
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("concurrency tests run on PostgreSQL only (set DATABASE_URL)")
    cup, cast = match_day.cup_tie, match_day.cast
    results = at_once(lambda: declare(cup, cast, "safety"), lambda: declare(cup, cast, "police"))
    (made,) = [r for r in results if isinstance(r, MethaneReport)]
    (refused,) = [r for r in results if isinstance(r, DecisionError)]
    assert refused.status == 409 and f"#{made.entry.seq}" in refused.message
    assert MethaneReport.objects.count() == 1

    # Two corrections of the same report at once: one is made, the other is told of it.
    results = at_once(
        *(
            lambda who=who: methane_correct(
                report=made, by=cast[who], parts={"hazards": f"Said by {who}"}, reason="x"
            )
            for who in ("safety", "police")
        )
    )
    (corrected,) = [r for r in results if isinstance(r, MethaneReport)]
    (refused,) = [r for r in results if isinstance(r, DecisionError)]
    assert refused.status == 409 and f"#{corrected.entry.seq}" in refused.message
    assert chain_verify(cup.pk)[1] is None
