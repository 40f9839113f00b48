"""Flashpoint warnings and the replay of the seed case."""

from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command

from safeground.accounts.models import User
from safeground.incidents.models import LogEntry
from safeground.incidents.replay import replay, scenario_fixture, scenario_load
from safeground.incidents.services import Place, log_entry_append
from safeground.incidents.verify import chain_verify

pytestmark = pytest.mark.django_db


def warnings(fixture) -> list[LogEntry]:
    return list(
        LogEntry.objects.filter(fixture=fixture, kind="warning")
        .select_related("zone")
        .order_by("seq")
    )


def test_the_seed_replay_warns_of_the_away_end_and_buffer_before_the_surge(demo) -> None:
    scenario = scenario_load("seed")
    fixture = scenario_fixture(scenario)
    replay(scenario, fixture=fixture, speed=0)
    surge = LogEntry.objects.get(fixture=fixture, category__code="crowd-surge")
    early = [w for w in warnings(fixture) if w.seq < surge.seq]
    zones = {w.zone.code for w in early}
    assert "away-se-cup" in zones
    assert zones & {"buffer-se-cup-east", "buffer-se-cup-south"}
    first = early[0]
    # A warning names the entries that caused it, and they are reports of this match.
    assert first.links and first.text.startswith("Flashpoint building in")
    causes = LogEntry.objects.filter(fixture=fixture, seq__in=first.links)
    assert {c.kind for c in causes} == {"report"}
    assert all(c.observed_at <= first.observed_at for c in causes)


def test_a_quiet_match_with_scattered_minor_entries_raises_none(league_match) -> None:
    author = User.objects.get(username="loggist")
    blocks = ["N-L1", "W-L4", "E-U3", "S-U6", "N-U7", "W-U9", "E-L2", "N-L5"]
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


def test_thresholds_come_from_settings(league_match, settings) -> None:
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


def test_a_high_speed_replay_gives_the_entries_and_chain_the_scenario_describes(demo) -> None:
    scenario = scenario_load("seed")
    fixture = scenario_fixture(scenario)
    replay(scenario, fixture=fixture, speed=1_000_000)
    played = [
        e for e in LogEntry.objects.filter(fixture=fixture).order_by("seq") if e.kind != "warning"
    ]
    assert len(played) == len(scenario.entries)
    kinds = {"assign": "assignment", "escalate": "escalation", "resolve": "status"}
    for spec, entry in zip(scenario.entries, played, strict=True):
        if "action" in spec:
            assert entry.kind == kinds[spec["action"]]
            assert entry.concerns is not None
        else:
            assert (entry.kind, entry.category.code) == ("report", spec["category"])
            assert (entry.block.code if entry.block else "") == spec.get("block", "")
        assert entry.observed_at == fixture.kickoff + timedelta(minutes=spec["at"])
    count, broken = chain_verify(fixture.pk)
    assert broken is None and count == LogEntry.objects.filter(fixture=fixture).count()


def test_replay_refuses_an_unknown_scenario(demo, tmp_path) -> None:
    with pytest.raises(CommandError, match="no scenario 'nope'"):
        call_command("replay", "nope", speed=0)
    bad = tmp_path / "bad.yaml"
    bad.write_text("fixture: {home: West Ham United, away: Chelsea}\nentries:\n  - {at: 1}\n")
    with pytest.raises(CommandError, match=r"entries\[0\]: needs 'at' and 'by'"):
        call_command("replay", str(bad), speed=0)


@pytest.mark.django_db(transaction=True)
def test_a_report_goes_out_live_before_its_flashpoint_check(cup_tie, monkeypatch) -> None:
    from safeground.incidents import services
    from safeground.live.events import capture_events

    seen_by_the_check: list[list[str]] = []
    real_check = services.flashpoint_check

    def check_after_commit(**kwargs):
        seen_by_the_check.append([e.data["entry"]["text"] for e in events])
        return real_check(**kwargs)

    monkeypatch.setattr(services, "flashpoint_check", check_after_commit)
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
    # Each check ran once its report had gone out; the warnings came after, in their own turn.
    assert seen_by_the_check[0] == ["Coins 0"]
    assert seen_by_the_check[-1][-1] == "Coins 4"
    assert [e.data["entry"]["kind"] for e in events].count("warning") >= 1
    assert chain_verify(cup_tie.pk)[1] is None


def test_a_failing_flashpoint_check_leaves_the_report_stored(cup_tie, monkeypatch) -> None:
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


def test_a_zone_already_warned_within_the_cooldown_is_not_warned_again(cup_tie) -> None:
    # Two checks that scored at once both ask; the second finds the first's warning under the lock.
    from safeground.incidents.services import log_entry_warn
    from safeground.venues.models import Zone

    zone = Zone.objects.get(ground=cup_tie.ground, code="away-se-cup")
    at = cup_tie.kickoff + timedelta(minutes=30)
    ask = {"fixture": cup_tie, "zone_id": zone.pk, "at": at, "severity": 4, "links": []}
    since = at - timedelta(minutes=15)
    first = log_entry_warn(**ask, text="Flashpoint building", quiet_since=since)
    assert first is not None
    assert log_entry_warn(**ask, text="Flashpoint building again", quiet_since=since) is None
    assert [w.text for w in warnings(cup_tie)] == ["Flashpoint building"]
    later = at + timedelta(minutes=20)  # after the cooldown it warns again
    assert log_entry_warn(**ask | {"at": later}, text="Again", quiet_since=at) is not None


def test_a_report_scores_only_the_zones_it_can_move(cup_tie, monkeypatch) -> None:
    # Trouble builds in the away section with no check, then a report in the North Stand (not
    # touching the away section) is checked: that check leaves the away section alone; a check
    # for a report in the away section warns of it.
    from safeground.incidents import flashpoint, services
    from safeground.incidents.selectors import entry_zone_ids, zone_map

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
    assert flashpoint.flashpoint_check(fixture=cup_tie, at=far.observed_at, zone_ids=north) == []
    assert warnings(cup_tie) == []
    flashpoint.flashpoint_check(fixture=cup_tie, at=far.observed_at, zone_ids=[away])
    assert [w.zone_id for w in warnings(cup_tie)][:1] == [away]


def test_a_report_about_zones_all_warned_within_the_cooldown_costs_one_query(
    cup_tie, django_assert_num_queries
) -> None:
    # The storm case: reports keep coming about zones already warned; their checks stay cheap.
    from django.utils import timezone

    from safeground.incidents.flashpoint import flashpoint_check, zone_neighbours
    from safeground.incidents.selectors import zone_map
    from safeground.incidents.services import log_entry_warn

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
