"""The demo's story in the season's figures: the trouble v Watford and v Middlesbrough (the
demo's history), the cup tie's own figures on a fresh load and after the seed case and the
arrival are replayed, the bans of the season. Each expected figure is counted from the demo's own
data files or is the night's public one."""

from collections import Counter
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from safeground.accounts.models import User
from safeground.bans.models import Ban
from safeground.casework.models import Outcome
from safeground.demo.history import ENTRIES
from safeground.demo.register import CLUB_BANS
from safeground.demo.replay import replay, scenario_fixture, scenario_load
from safeground.demo.season import demo_load
from safeground.entry.models import Scan, Ticket
from safeground.entry.selectors import entry_counts
from safeground.incidents.models import LogEntry
from safeground.matches.models import Fixture
from safeground.reports.match_report import match_report
from safeground.reports.season import SeasonFilter, season

pytestmark = pytest.mark.django_db


def test_a_fresh_demo_tells_the_cup_ties_own_figures(settings, no_second_factor) -> None:
    """Nothing run after the load: the report and the season say 7 arrests, 30 prevented from
    attending and 23 bans that season, the night's figures (shared/domain/london-derby-2016.md)."""
    settings.SAFEGROUND_DEMO_HISTORY = True
    ground = demo_load()
    cup = Fixture.objects.get(away_club__name="Chelsea", stage="Fourth round")

    report = match_report(cup)
    assert (report.arrests, report.prevented) == (7, 30)
    client = Client()
    client.force_login(User.objects.get(username="safety"))
    page = client.get(f"/fixtures/{cup.pk}/report/").content.decode()
    assert 'data-figure="arrests">7<' in page and 'data-figure="prevented">30<' in page
    # The 30: the flagged holders held for ID and the tickets cancelled before the match, each
    # refused at a turnstile and never admitted.
    refused = Scan.objects.filter(fixture=cup, decision="deny")
    assert set(refused.values_list("reason", flat=True)) == {"flagged", "cancelled"}
    assert refused.values("ticket").distinct().count() == 30
    assert not Ticket.objects.filter(fixture=cup, entered_at__isnull=False).exists()

    found = season(ground, SeasonFilter())
    on_the_night = found.bans[[m["id"] for m in found.matches].index(cup.pk)]
    assert on_the_night["issued"] == 23
    row = next(m for m in found.matches if m["id"] == cup.pk)
    assert (row["arrests"], row["prevented"]) == (7, 30)


OUTCOMES = ("arrest", "ejection")


def test_the_cup_ties_report_counts_its_arrests_apart_from_its_incidents(
    settings, no_second_factor
) -> None:
    """An arrest is not an incident (issue 27): the report's "Incidents reported" leaves the
    night's 7 arrests out, as the season does, and shows them on their own line."""
    settings.SAFEGROUND_DEMO_HISTORY = True
    ground = demo_load()
    cup = Fixture.objects.get(away_club__name="Chelsea", stage="Fourth round")
    reports = LogEntry.objects.filter(fixture=cup, kind=LogEntry.Kind.REPORT)
    arrests = reports.filter(category__code="arrest").count()
    incidents = reports.exclude(category__code__in=("decision", *OUTCOMES)).count()
    assert arrests == 7  # on the old count, "Incidents reported" was these 7 and more

    report = match_report(cup)
    assert (report.incidents_total, report.arrests) == (incidents, 7)
    assert "arrest" not in {row["code"] for row in report.incidents}
    client = Client()
    client.force_login(User.objects.get(username="safety"))
    page = client.get(f"/fixtures/{cup.pk}/report/").content.decode()
    assert f'data-figure="incidents">{incidents}<' in page
    row = next(m for m in season(ground, SeasonFilter()).matches if m["id"] == cup.pk)
    assert row["incidents_total"] == report.incidents_total  # one definition of an incident


def test_the_demo_season_shows_the_seed_case_figures(settings) -> None:
    settings.SAFEGROUND_DEMO_HISTORY = True
    ground = demo_load()
    scenario = scenario_load("seed")
    cup = scenario_fixture(scenario)
    replay(scenario, fixture=cup, speed=0)

    found = season(ground, SeasonFilter())
    by_opponent = {m["opponent"]: m for m in found.matches}
    for opponent in ("Watford", "Middlesbrough"):
        logged = [e for e in ENTRIES if e[0] == opponent]
        row = by_opponent[opponent]
        # Arrests and ejections are counted apart, not as incidents (issue 27).
        assert row["incidents_total"] == sum(1 for e in logged if e[2] not in OUTCOMES)
        assert row["arrests"] == sum(1 for e in logged if e[2] == "arrest")
    assert by_opponent["Middlesbrough"]["arrests"] == 4  # the public figure, from the data
    # The replay finds the night's arrests the demo recorded and adds none.
    arrests = [e for e in scenario.entries if e.get("category") == "arrest"]
    assert by_opponent["Chelsea"]["arrests"] == len(arrests) == 7
    report = match_report(cup)
    assert report.arrests == len(arrests)
    debrief = [e for e in scenario.entries if e["by"] == "safety" and float(e["at"]) >= 105]
    assert [note["text"] for note in report.debrief] == [e["text"] for e in debrief]

    # The gates: the cup tie's arrival played through the turnstiles (forged tickets, banned and
    # flagged holders turned away); the report's denials are the scans stored, and those
    # prevented from attending still the night's 30.
    call_command("replay_arrival", speed=0, share=1.0, confirm=4, lanes=1, stdout=StringIO())
    report = match_report(cup)
    stored = Counter(
        Scan.objects.filter(fixture=cup, decision="deny").values_list("reason", flat=True)
    )
    assert {row["code"]: row["count"] for row in report.denied if row["count"]} == dict(stored)
    kept_out = {
        ticket
        for ticket, reason in Scan.objects.filter(fixture=cup).values_list("ticket_id", "reason")
        if reason in {"banned", "flagged", "cancelled"}
    } - set(
        Ticket.objects.filter(fixture=cup, entered_at__isnull=False).values_list("pk", flat=True)
    )
    assert report.prevented == len(kept_out) == entry_counts(cup)["prevented"] == 30
    assert report.admitted == Scan.objects.filter(fixture=cup, decision="admit").count()

    # The season's bans on the night of the cup tie: the club bans in force and the one under
    # appeal, the 23 of the season.
    on_the_night = found.bans[[m["id"] for m in found.matches].index(cup.pk)]
    appealed = Ban.objects.filter(status=Ban.Status.APPEALED).count()
    assert on_the_night["issued"] == len(CLUB_BANS) + appealed == 23


def test_every_arrest_in_the_demos_log_is_recorded_in_a_case(settings) -> None:
    """The 4 arrests v Middlesbrough and the cup tie's 7: each in a case with its offence group
    (from the entry's words) and the force policing the match, none "not recorded"; the
    figures count each once."""
    settings.SAFEGROUND_DEMO_HISTORY = True
    ground = demo_load()
    arrests = LogEntry.objects.filter(fixture__ground=ground, category__code="arrest")
    assert arrests.count() == 11
    for entry in arrests:
        recorded = Outcome.objects.get(kind="arrest", case__entries=entry)
        assert recorded.home_office_offence in ("public_disorder", "missile"), entry.text
        assert recorded.force == "Metropolitan Police Service"
    cup = Fixture.objects.get(away_club__name="Chelsea", stage="Fourth round")
    assert match_report(cup).arrests == 7
    offences = season(ground, SeasonFilter()).arrests_by_offence
    assert "Not recorded in a case" not in {row["offence"] for row in offences}
    assert sum(row["arrests"] for row in offences) == 11
