"""The post-match report: every figure is the count of what the played match made (conftest)."""

import io
from collections import Counter
from datetime import timedelta

import pytest
from pypdf import PdfReader

from safeground.bans.models import Ban
from safeground.entry import rules
from safeground.entry.models import Scan
from safeground.entry.rules import REASONS
from safeground.entry.selectors import PREVENTING
from safeground.incidents.models import LogCheckpoint, LogEntry
from safeground.incidents.selectors import NOT_INCIDENT_CATEGORIES
from safeground.incidents.services import log_checkpoint_make
from safeground.reports.match_report import TIMELINE_STEP, match_report, match_report_for

from .conftest import Played, denied_by_reason


def admitted(played: Played) -> list[tuple[float, str]]:
    return [(m, code) for m, code, r in played.scans if r.decision == Scan.Decision.ADMIT]


def test_the_gates_figures_are_the_scans(played: Played) -> None:
    report = match_report(played.cup)

    in_once = {code for _, code in admitted(played)}
    assert report.admitted == len(in_once)
    expected = denied_by_reason(played.scans)
    assert {row["code"]: row["count"] for row in report.denied if row["count"]} == expected
    assert report.denied_total == sum(expected.values())
    kept_out = {code for _, code, r in played.scans if r.reason in PREVENTING} - in_once
    assert report.prevented == len(kept_out) > 0


def test_denials_are_named_in_the_reason_tables_words(
    played: Played, client_for, no_second_factor
) -> None:
    report = match_report(played.cup)

    assert [(row["code"], row["label"]) for row in report.denied] == [
        (reason.code, reason.label) for reason in REASONS
    ]
    page = client_for("safety").get(f"/fixtures/{played.cup.pk}/report/").content.decode()
    assert f'<tr data-reason="flagged"><td>{rules.label("flagged")}</td>' in page


def test_the_timeline_counts_admissions_per_step_from_kick_off(played: Played) -> None:
    timeline = match_report(played.cup).timeline

    per_step = Counter(int(m // TIMELINE_STEP) * TIMELINE_STEP for m, _ in admitted(played))
    drawn = dict(zip(timeline["minutes"], timeline["admitted"], strict=True))
    assert {m: n for m, n in drawn.items() if n} == dict(per_step)
    # kick-off and full time are on the axis, so the marks can be drawn
    assert 0 in timeline["minutes"] and max(timeline["minutes"]) >= 105


def test_incidents_by_category_severity_block_and_outcomes(played: Played) -> None:
    report = match_report(played.cup)
    reports = played.reports
    incidents = [e for e in reports if e.category.code not in NOT_INCIDENT_CATEGORIES]  # type: ignore[union-attr]
    assert len(incidents) < len(reports)  # the match has arrests and ejections, counted apart

    by_category_severity = Counter((e.category.code, e.severity) for e in incidents)  # type: ignore[union-attr]
    shown = {
        (row["code"], severity): n
        for row in report.incidents
        for severity, n in enumerate(row["by_severity"], start=1)
        if n
    }
    assert shown == dict(by_category_severity)
    assert report.incidents_total == len(incidents)
    codes = Counter(e.category.code for e in reports)  # type: ignore[union-attr]
    assert (report.arrests, report.ejections) == (codes["arrest"], codes["ejection"])
    # The map counts what the count by category counts: one definition of an incident.
    blocks = Counter(e.block.code for e in incidents if e.block)  # type: ignore[union-attr]
    assert report.blocks["counts"] == dict(blocks)
    elsewhere = sum(row["count"] for row in report.blocks["elsewhere"])
    assert elsewhere == len([e for e in incidents if not e.block_id])
    assert sum(blocks.values()) + elsewhere == report.incidents_total


def test_escalations_show_minutes_from_report_to_each_action(played: Played) -> None:
    report = match_report(played.cup)

    assert len(report.escalations) == 1
    row = report.escalations[0]
    assert (row["to_assignment"], row["to_escalation"], row["to_resolution"]) == played.acted
    assert row["escalated_to"] == [LogEntry.Level.POLICE.label]


def test_broadcasts_chain_debrief_and_bans_proposed(played: Played) -> None:
    report = match_report(played.cup)

    broadcast = played.cup.broadcasts.get()
    assert report.broadcasts == [
        {
            **report.broadcasts[0],
            "recipients": len(broadcast.recipient_ids),
            "acknowledged": broadcast.acks.count(),
        }
    ]
    assert report.broadcasts[0]["acknowledged"] == 1
    entries = LogEntry.objects.filter(fixture=played.cup).count()
    assert report.chain == {
        "entries": entries,
        "intact": True,
        "break": None,
        "problems": [],
        "anchored": 0,
        "checkpoints": [],
    }
    # At full time the log is signed: the report carries the checkpoint and checks against it.
    signed = log_checkpoint_make(fixture=played.cup, reason=LogCheckpoint.Reason.FULL_TIME)
    chain = match_report(played.cup).chain
    assert (chain["anchored"], chain["intact"]) == (entries, True)
    assert [(c["entries"], c["head"]) for c in chain["checkpoints"]] == [(entries, signed.head)]
    assert played.debrief is not None
    assert [note["text"] for note in report.debrief] == [played.debrief.text]
    # The bans were proposed today, seasons after the match: the window closes at its season's end.
    assert report.bans_proposed["total"] == 0
    assert report.bans_proposed["until_is"] == "season_end"
    assert report.bans_proposed["until"].startswith("2024-07-01T00:00:00")
    Ban.objects.filter(pk__in=[b.pk for b in played.bans]).update(
        created_at=played.cup.kickoff + timedelta(hours=3)
    )
    report = match_report(played.cup)
    assert report.bans_proposed["total"] == len(played.bans)
    # The league match a week earlier: its window closes at the cup tie's kick-off.
    earlier = match_report(played.day.league_match).bans_proposed
    assert (earlier["total"], earlier["until_is"]) == (0, "next_match")


def test_home_only_reports_count_for_the_home_club_only(played: Played) -> None:
    cast = played.day.cast
    home = match_report_for(cast["safety"], played.cup.pk)
    police = match_report_for(cast["police"], played.cup.pk)

    incidents = [e for e in played.reports if e.category.code not in NOT_INCIDENT_CATEGORIES]  # type: ignore[union-attr]
    home_only = [e for e in incidents if e.home_only]
    assert home.incidents_total == len(incidents)
    assert police.incidents_total == len(incidents) - len(home_only) < home.incidents_total


def test_the_report_reads_in_a_fixed_number_of_queries(
    played: Played, django_assert_max_num_queries
) -> None:
    safety = played.day.cast["safety"]
    # 25, the supporters' reports section's one, the broadcasts' delivery to phones' four
    with django_assert_max_num_queries(30):
        match_report_for(safety, played.cup.pk).figures()


def test_the_page_and_the_pdf_show_the_figures(
    played: Played, client_for, no_second_factor
) -> None:
    client = client_for("safety")
    report = match_report(played.cup)

    page = client.get(f"/fixtures/{played.cup.pk}/report/").content.decode()
    for name, value in [
        ("admitted", report.admitted),
        ("denied", report.denied_total),
        ("arrests", report.arrests),
        ("ejections", report.ejections),
        ("incidents", report.incidents_total),
    ]:
        assert f'data-figure="{name}">{value}<' in page
    assert 'data-chart="chart-timeline"' in page and "<script>" not in page

    response = client.get(f"/fixtures/{played.cup.pk}/report.pdf")
    assert response["Content-Type"] == "application/pdf"
    pdf = PdfReader(io.BytesIO(response.content))
    text = " ".join(page.extract_text() for page in pdf.pages)
    assert len(pdf.pages) >= 2
    assert "Post-match report" in text
    assert f"Arrests {report.arrests}" in text
    assert f"Ejections {report.ejections}" in text
    assert f"Incidents reported {report.incidents_total}" in text
    assert played.debrief is not None and played.debrief.text[:40] in text


@pytest.mark.parametrize("username", ["steward", "liaison"])
def test_stewards_and_the_away_club_may_not_read_it(
    played: Played, client_for, no_second_factor, username
) -> None:
    assert client_for(username).get(f"/fixtures/{played.cup.pk}/report/").status_code == 403
