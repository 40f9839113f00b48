"""Flashpoint warnings: when the log warns of trouble building in a zone."""

import threading
from datetime import timedelta

import pytest

from safeground import background
from safeground.accounts.models import User
from safeground.incidents.models import LogEntry
from safeground.incidents.services import Place, log_entry_append
from safeground.incidents.verify import chain_verify

pytestmark = pytest.mark.django_db


def warnings(fixture) -> list[LogEntry]:
    return list(
        LogEntry.objects.filter(fixture=fixture, kind="warning")
        .select_related("zone")
        .order_by("seq")
    )


def test_a_quiet_match_with_scattered_minor_entries_raises_none(match_day) -> None:
    league_match = match_day.league_match
    author = User.objects.get(username="loggist")
    blocks = ["N-L1", "S-L4", "N-L3", "S-L2", "N-L2", "S-L1", "S-L3", "N-L1"]
    for n, block in enumerate(blocks):
        log_entry_append(
            fixture=league_match,
            author=author,
            category="medical" if n % 2 else "alcohol",
            severity=1 + n % 2,
            text="Minor",
            place=Place(block=block),
            observed_at=league_match.kickoff + timedelta(minutes=12 * n),
        )
    assert warnings(league_match) == []


def test_thresholds_come_from_settings(match_day, settings) -> None:
    league_match = match_day.league_match
    author = User.objects.get(username="loggist")

    def two_reports(fixture, start):
        for minute in (0, 1):
            log_entry_append(
                fixture=fixture,
                author=author,
                category="missile",
                severity=3,
                text="Coins",
                place=Place(block="N-L2"),
                observed_at=start + timedelta(minutes=minute),
            )

    settings.SAFEGROUND_FLASHPOINT = {"threshold": 100.0}
    two_reports(league_match, league_match.kickoff)
    assert warnings(league_match) == []
    settings.SAFEGROUND_FLASHPOINT = {"threshold": 8.0}
    two_reports(league_match, league_match.kickoff + timedelta(minutes=2))
    found = warnings(league_match)
    assert [w.zone.code for w in found] == ["home-north"]
    assert "reached the threshold 8" in found[0].text


@pytest.mark.django_db(transaction=True)
def test_a_report_returns_and_goes_out_live_before_its_flashpoint_check(
    match_day, monkeypatch
) -> None:
    cup_tie = match_day.cup_tie
    # The scoring is held on the flashpoint thread: every report still returns and goes out;
    # the warning follows once the scoring runs.
    from safeground.incidents import flashpoint_watch
    from safeground.live.events import capture_events

    release = threading.Event()
    real_advance = flashpoint_watch.MatchWatch.advance

    def held(self, fixture, first_id, last_id):
        assert release.wait(10)
        return real_advance(self, fixture, first_id, last_id)

    monkeypatch.setattr(flashpoint_watch.MatchWatch, "advance", held)
    with capture_events() as events:
        for n in range(5):  # enough missiles in one block to warn of its zone
            log_entry_append(
                fixture=cup_tie,
                author=User.objects.get(username="loggist"),
                category="missile",
                severity=4,
                text=f"Coins {n}",
                place=Place(block="S-L1"),
            )
        assert [e.data["entry"]["text"] for e in events] == [f"Coins {n}" for n in range(5)]
        release.set()
        assert background.settle(10)
    kinds = [e.data["entry"]["kind"] for e in events]
    assert kinds[:5] == ["report"] * 5
    assert set(kinds[5:]) == {"warning"}
    assert chain_verify(cup_tie.pk)[1] is None


def test_a_failing_flashpoint_check_leaves_the_report_stored(match_day, monkeypatch) -> None:
    cup_tie = match_day.cup_tie
    from safeground.incidents import services

    def broken(**kwargs):
        raise RuntimeError("scoring failed")

    monkeypatch.setattr(services, "flashpoint_check", broken)
    entry = log_entry_append(
        fixture=cup_tie,
        author=User.objects.get(username="loggist"),
        category="missile",
        text="Coin thrown",
        place=Place(block="S-L1"),
    )
    assert LogEntry.objects.get(pk=entry.pk).text == "Coin thrown"


def test_a_zone_already_warned_within_the_cooldown_is_not_warned_again(match_day) -> None:
    cup_tie = match_day.cup_tie
    # Two checks that scored at once both ask; the second finds the first's warning under the lock.
    from safeground.incidents.services import log_entry_warn
    from safeground.venues.models import Zone

    zone = Zone.objects.get(ground=cup_tie.ground, code="away-south-cup")
    at = cup_tie.kickoff + timedelta(minutes=30)
    ask = {"fixture": cup_tie, "zone_id": zone.pk, "at": at, "severity": 4, "links": []}
    since = at - timedelta(minutes=15)
    first = log_entry_warn(**ask, text="Flashpoint building", quiet_since=since)
    assert first is not None
    assert log_entry_warn(**ask, text="Flashpoint building again", quiet_since=since) is None
    assert [w.text for w in warnings(cup_tie)] == ["Flashpoint building"]
    later = at + timedelta(minutes=20)  # after the cooldown it warns again
    assert log_entry_warn(**ask | {"at": later}, text="Again", quiet_since=at) is not None


def test_a_report_scores_only_the_zones_it_can_move(match_day, monkeypatch) -> None:
    cup_tie = match_day.cup_tie
    # Trouble builds in the away section with no check, then a report in the North Stand (not
    # touching the away section) is checked: that check leaves the away section alone; a check
    # for a report in the away section warns of it.
    from safeground.incidents import services
    from safeground.incidents.selectors import entry_zone_ids, zone_map

    flashpoint_check = services.flashpoint_check  # the check itself, not after each report
    monkeypatch.setattr(services, "flashpoint_check", lambda **kwargs: [])
    loggist = User.objects.get(username="loggist")
    for n in range(5):
        log_entry_append(
            fixture=cup_tie,
            author=loggist,
            category="missile",
            severity=4,
            text=f"Coins {n}",
            place=Place(block="S-L1"),
        )
    far = log_entry_append(
        fixture=cup_tie,
        author=loggist,
        category="other",
        severity=1,
        text="Queue at the kiosk",
        place=Place(block="N-L1"),
    )
    zones = zone_map(cup_tie)
    north = entry_zone_ids(far, zones)
    (away,) = zones.blocks[cup_tie.ground.blocks.get(code="S-L1").pk]
    assert away not in north
    assert flashpoint_check(fixture=cup_tie, at=far.observed_at, zone_ids=north) == []
    assert warnings(cup_tie) == []
    flashpoint_check(fixture=cup_tie, at=far.observed_at, zone_ids=[away])
    assert [w.zone_id for w in warnings(cup_tie)][:1] == [away]


def test_a_report_about_zones_all_warned_within_the_cooldown_costs_one_query(
    match_day, django_assert_num_queries
) -> None:
    cup_tie = match_day.cup_tie
    # The storm case: reports keep coming about zones already warned; their checks stay cheap.
    from django.utils import timezone

    from safeground.incidents.flashpoint import zone_neighbours
    from safeground.incidents.selectors import zone_map
    from safeground.incidents.services import flashpoint_check, log_entry_warn

    (away,) = zone_map(cup_tie).blocks[cup_tie.ground.blocks.get(code="S-L1").pk]
    at = timezone.now()
    for zone_id in {away, *zone_neighbours(cup_tie)[away]}:
        warning = log_entry_warn(
            fixture=cup_tie,
            zone_id=zone_id,
            at=at,
            severity=4,
            text="Flashpoint building",
            links=[],
            quiet_since=at - timedelta(minutes=15),
        )
        assert warning is not None
    with django_assert_num_queries(1):
        assert (
            flashpoint_check(fixture=cup_tie, at=at + timedelta(minutes=1), zone_ids=[away]) == []
        )


def test_the_scores_kept_as_reports_come_are_the_scores_read_from_the_log(
    match_day, monkeypatch
) -> None:
    league_match = match_day.league_match
    # The flashpoint thread scores each report from the last score (MatchWatch); the same
    # match scored from the database at each report's time (zone_scores) gives the same figures,
    # through reports at one moment, a report observed before others, corrections of severity
    # and place, and reports leaving the window.
    import random

    from safeground.incidents import flashpoint, flashpoint_watch, services
    from safeground.incidents.services import log_entry_correct

    monkeypatch.setattr(services, "flashpoint_check", lambda **kwargs: [])
    author = User.objects.get(username="loggist")
    blocks = ["N-L1", "N-L2", "N-L3", "S-L1", "S-L2", "S-L3", "S-L4"]
    dice = random.Random(2016)
    minute = 0.0
    entries = []
    exact: dict[int, dict[int, tuple[float, int, int]]] = {}  # as the log stood at each report
    for n in range(60):
        minute += dice.choice([0, 0.5, 1, 2, 7])  # some at one moment, some far apart
        late = n in (20, 41)  # observed before the reports already in
        entry = log_entry_append(
            fixture=league_match,
            author=author,
            category="missile",
            severity=dice.randint(1, 5),
            text=f"Report {n}",
            place=Place(block=dice.choice(blocks)),
            observed_at=league_match.kickoff + timedelta(minutes=minute - (9 if late else 0)),
        )
        entries.append(entry)
        exact[entry.seq] = {
            z.zone_id: (z.score, z.recent, z.before)
            for z in flashpoint.zone_scores(league_match, entry.observed_at)
        }
        if n in (10, 33):
            log_entry_correct(
                entry=entries[n - 3], author=author, note="Wrong block", place=Place(block="N-L1")
            )
        if n == 47:
            log_entry_correct(entry=entries[n - 1], author=author, note="Worse", severity=5)

    kept: list[tuple[int, dict[int, tuple[float, int, int]]]] = []

    class Recording(flashpoint_watch.MatchWatch):
        def _check(self, fixture, report, conf):
            if report.at >= self.newest:  # a late report is scored from the database anyway
                scores = (self._score(z, report.at, conf) for z in self.neighbours)
                kept.append(
                    (report.seq, {z.zone_id: (z.score, z.recent, z.before) for z in scores})
                )
            return []

    Recording(league_match.pk, services.flashpoint_warning_write).advance(
        league_match, entries[0].pk, entries[-1].pk
    )
    assert len(kept) >= 55
    for seq, scores in kept:
        assert scores == {
            zone: (pytest.approx(score, abs=0.011), recent, before)
            for zone, (score, recent, before) in exact[seq].items()
        }, f"report #{seq}"
    assert max(max(s[0] for s in scores.values()) for _, scores in kept) > 12  # would warn


@pytest.mark.django_db(transaction=True)
def test_a_process_starting_afresh_scores_on_from_the_reports_before_it(
    match_day, monkeypatch
) -> None:
    cup_tie = match_day.cup_tie
    # Two missiles scored by one process (no warning yet); a process started afresh (a
    # restart) is told of the third: it reads the two from the log without scoring them again,
    # and the three together reach the threshold.
    from safeground.incidents import flashpoint_watch, services

    loggist = User.objects.get(username="loggist")

    def missile(n: int) -> LogEntry:
        return log_entry_append(
            fixture=cup_tie,
            author=loggist,
            category="missile",
            severity=4,
            text=f"Coins {n}",
            place=Place(block="S-L1"),
        )

    missile(1), missile(2)
    assert background.settle(10)
    assert warnings(cup_tie) == []
    restarted = flashpoint_watch.Watcher(services.flashpoint_warning_write)
    monkeypatch.setattr(services, "flashpoint_watcher", restarted)
    third = missile(3)
    assert background.settle(10)
    (warning,) = warnings(cup_tie)
    assert warning.text.startswith("Flashpoint building in ")
    assert "reached the threshold 12" in warning.text
    assert f"#{third.seq}" in warning.text
