"""The season dashboard of a ground: each match's figures and the season's, counted from the
data the played matches made; the filters narrow them."""

import statistics
from collections import Counter
from datetime import date, timedelta

from safeground.bans.models import Ban
from safeground.entry.models import Scan
from safeground.incidents.selectors import NOT_INCIDENT_CATEGORIES
from safeground.incidents.services import Place, log_entry_assign, log_entry_set_status
from safeground.reports.season import SeasonFilter, season, season_for
from tests import factories

from .conftest import Played


def league_trouble(played: Played) -> list:
    """Three reports at the league match, one assigned and resolved."""
    league, loggist = played.day.league_match, played.day.cast["loggist"]
    made = [
        factories.report(league, category=code, place=Place(block=block), observed_at=at)
        for code, block, at in [
            ("disorder", "S-L1", league.kickoff + timedelta(minutes=20)),
            ("disorder", "N-L1", league.kickoff + timedelta(minutes=25)),
            ("arrest", "S-L1", league.kickoff + timedelta(minutes=30)),
        ]
    ]
    log_entry_assign(
        entry=made[0],
        author=loggist,
        assignee=played.day.cast["supervisor"],
        observed_at=league.kickoff + timedelta(minutes=26),
    )
    log_entry_set_status(
        entry=made[0],
        author=loggist,
        status="resolved",
        observed_at=league.kickoff + timedelta(minutes=44),
    )
    return made


def test_each_match_and_the_season_count_what_was_logged_and_scanned(played: Played) -> None:
    league_reports = league_trouble(played)
    found = season(played.day.ground, SeasonFilter())

    by_match = {m["id"]: m for m in found.matches}
    assert list(by_match) == [played.day.league_match.pk, played.cup.pk]  # oldest first
    for fixture, reports in [
        (played.day.league_match, league_reports),
        (played.cup, played.reports),
    ]:
        row = by_match[fixture.pk]
        codes = Counter(e.category.code for e in reports)
        outcomes = {"arrest": codes.pop("arrest", 0), "ejection": codes.pop("ejection", 0)}
        # Arrests and ejections are shown apart, never among the incidents (issue 27).
        assert row["incidents"] == dict(codes)
        assert row["incidents_total"] == codes.total()
        assert (row["arrests"], row["ejections"]) == (outcomes["arrest"], outcomes["ejection"])
    denied = sum(1 for _, _, r in played.scans if r.decision == Scan.Decision.DENY)
    assert by_match[played.cup.pk]["denied"] == denied
    assert by_match[played.day.league_match.pk]["denied"] == 0
    # Response times: the one incident acted on at each match.
    assert by_match[played.cup.pk]["median_to_assignment"] == played.acted[0]
    assert by_match[played.cup.pk]["median_to_resolution"] == played.acted[2]
    assert by_match[played.day.league_match.pk]["median_to_resolution"] == 44 - 20
    assert found.totals["median_to_resolution"] == statistics.median([played.acted[2], 44 - 20])

    everything = league_reports + played.reports
    # The busiest blocks count incidents as every figure does: arrests and ejections apart.
    incidents = [e for e in everything if e.category.code not in NOT_INCIDENT_CATEGORIES]  # type: ignore[union-attr]
    blocks = Counter(e.block.code for e in incidents if e.block)
    assert found.busiest_blocks == [
        {"block": code, "incidents": n}
        for code, n in sorted(blocks.items(), key=lambda item: (-item[1], item[0]))
    ]
    outcomes = ("arrest", "ejection")
    assert found.totals["incidents"] == sum(e.category.code not in outcomes for e in everything)
    assert found.totals["arrests"] == sum(1 for e in everything if e.category.code == "arrest")


def test_filters_narrow_the_season_to_a_competition_or_an_opponent(played: Played) -> None:
    league_trouble(played)
    ground, cup = played.day.ground, played.cup

    cup_only = season(ground, SeasonFilter(competition=cup.competition_id))
    assert [m["id"] for m in cup_only.matches] == [cup.pk]
    assert cup_only.totals["incidents"] == len(played.incidents)
    against = season(ground, SeasonFilter(opponent=played.day.league_match.away_club_id))
    assert [m["id"] for m in against.matches] == [played.day.league_match.pk]
    assert {c.pk for c in cup_only.opponents} == {
        cup.away_club_id,
        played.day.league_match.away_club_id,
    }


def test_bans_issued_this_season_and_in_force_on_each_match_day(match_day) -> None:
    home, ground = match_day.cast.home, match_day.ground
    league_day = match_day.league_match.kickoff.date()
    cup_day = match_day.cup_tie.kickoff.date()
    made = [
        factories.ban(home, starts_on=date(2023, 9, 2), ends_on=date(2030, 1, 1)),
        factories.ban(home, starts_on=league_day + timedelta(days=2), is_life=True),
        factories.ban(home, starts_on=date(2021, 5, 1), ends_on=date(2031, 1, 1)),
        factories.ban(home, status="expired"),
        factories.ban(home, status="proposed"),
        factories.ban(home, status="rejected"),
        # Every other status too: the count reads only issued bans, the rule's own statuses.
        factories.ban(home, status="revoked", starts_on=date(2023, 9, 2), ends_on=date(2030, 1, 1)),
        factories.ban(home, status="appealed", starts_on=cup_day, ends_on=date(2030, 1, 1)),
        factories.ban(home, status="upheld", starts_on=date(2023, 8, 1), is_life=True),
        factories.ban(home, status="approved"),  # starts in 2099
    ]
    took_effect = [b for b in made if b.status not in {"proposed", "rejected"}]
    season_start = date(2023, 8, 1)

    def issued(day: date) -> int:
        return sum(1 for b in took_effect if season_start <= b.starts_on <= day)

    def in_force(day: date) -> int:
        return sum(
            1
            for b in took_effect
            if b.starts_on <= day
            and (b.ends_on is None or b.ends_on >= day)
            and (b.ended_on is None or b.ended_on > day)
        )

    found = season(ground, SeasonFilter())
    assert found.bans == [
        {"date": day.isoformat(), "issued": issued(day), "in_force": in_force(day)}
        for day in (league_day, cup_day)
    ]
    assert [b["in_force"] for b in found.bans] == [
        Ban.objects.in_force_on(day).filter(organisation=home).count()
        for day in (league_day, cup_day)
    ]
    assert found.bans[0]["issued"] < found.bans[1]["issued"]
    assert Ban.objects.count() == len(made)


def test_the_season_reads_in_the_same_few_queries_however_many_matches(
    played: Played, django_assert_max_num_queries
) -> None:
    safety, ground = played.day.cast["safety"], played.day.ground
    with django_assert_max_num_queries(15):
        season_for(safety, ground.code, SeasonFilter()).figures()
    for _ in range(3):
        factories.report(factories.fixture(ground), category="missile")
    with django_assert_max_num_queries(15):
        assert len(season_for(safety, ground.code, SeasonFilter()).matches) == 5


def test_the_dashboard_page_carries_each_chart_as_json(
    played: Played, client_for, no_second_factor
) -> None:
    page = client_for("loggist").get(f"/grounds/{played.day.ground.code}/season/")
    html = page.content.decode()
    for chart in ("incidents", "outcomes", "bans", "denied", "response"):
        assert f'<script id="chart-{chart}" type="application/json">' in html
        assert f'data-chart="chart-{chart}"' in html
    assert "chart-4.6.1.umd.min.js" in html


def test_the_season_pdf_draws_its_charts_as_svg(
    played: Played, client_for, no_second_factor
) -> None:
    import io

    from pypdf import PdfReader

    response = client_for("safety").get(f"/grounds/{played.day.ground.code}/season.pdf")
    text = " ".join(p.extract_text() for p in PdfReader(io.BytesIO(response.content)).pages)
    assert "Incidents per match by category" in text
    assert "Arrests and ejections per match" in text
    assert f"Incidents {len(played.incidents)}" in text
