"""The season dashboard reads the gates' counts the database keeps as scans are stored
(entry/counts.py, ADR 0022): after online scans, late offline scans merged with their own times,
corrections (a flag cleared, a ticket cancelled after it was used) and a holder erased, its
figures equal a full recount of the raw rows, on SQLite and on PostgreSQL."""

import statistics
import uuid
from collections import Counter
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from safeground.entry import counts
from safeground.entry.models import PreventedCount, Scan, ScanCount, Ticket, TicketFlag
from safeground.entry.runtime import lookups
from safeground.entry.scans import offline_scans_upload
from safeground.entry.services import ticket_cancel
from safeground.incidents import counts as log_counts
from safeground.incidents.services import (
    Place,
    log_entry_assign,
    log_entry_correct,
    log_entry_escalate,
    log_entry_set_status,
)
from safeground.matches.models import Fixture
from safeground.privacy.services import retention_apply
from safeground.reports.season import SeasonFilter, season
from safeground.reports.selectors import (
    arrests_and_ejections,
    counted_incidents,
    counted_reports,
    response_times,
)
from tests import factories

pytestmark = pytest.mark.django_db


def scanned(fixture: Fixture, barcode: str, turnstile: str, minutes: float) -> str:
    """The reason the turnstile gave ("" for an admission)."""
    return factories.scan(fixture, barcode, turnstile=turnstile, minutes=minutes).reason or ""


def offline(fixture: Fixture, *scans: tuple[str, str, float, str, str | None]) -> None:
    """A scanner's upload after the network came back: (barcode, turnstile, minutes from
    kick-off, decision, reason) each, stored at full time with the times they happened."""
    lookups.caches_clear()
    _, key = factories.device(fixture.ground.organisation, profile="scanner")
    device = lookups.device_for_key(key)
    assert device is not None
    data = {
        "scans": [
            {
                "barcode": barcode,
                "turnstile": turnstile,
                "scanned_at": (fixture.kickoff + timedelta(minutes=minutes)).isoformat(),
                "nonce": str(uuid.uuid4()),
                "direction": "in",
                "decision": decision,
                "reason": reason,
            }
            for barcode, turnstile, minutes, decision, reason in scans
        ]
    }
    offline_scans_upload(device=device, data=data, now=fixture.kickoff + timedelta(minutes=110))


def dashboard_against_recount(ground) -> dict[int, tuple[int, int]]:  # type: ignore[no-untyped-def]
    """Each match's (denied, prevented) on the dashboard, checked against a recount of the rows,
    with every kept scan count (match, gate, direction, decision, reason) against its recount."""
    shown = season(ground, SeasonFilter())
    ids = [m["id"] for m in shown.matches]
    denied, prevented = counts.denied_recount(ids), counts.prevented_recount(ids)
    figures = {m["id"]: (m["denied"], m["prevented"]) for m in shown.matches}
    assert figures == {pk: (denied.get(pk, 0), prevented[pk]) for pk in ids}
    assert shown.totals["denied"] == sum(denied.values())
    assert shown.totals["prevented"] == sum(prevented.values())
    every = list(Fixture.objects.values_list("pk", flat=True))
    assert counts.scans_kept(every) == counts.scans_recount(every)
    assert counts.differences() == []
    return figures


@pytest.fixture
def season_played(match_day):  # type: ignore[no-untyped-def]
    """Two matches at the gates: admissions, every kind of refusal, late offline scans,
    corrections. Returns the match day."""
    cup, league = match_day.cup_tie, match_day.league_match
    factories.tickets(cup, 7, block="S-L2", prefix="AWAY")
    factories.tickets(cup, 4, block="N-L1", prefix="HOME")
    flagged = factories.ticket(cup, block="N-L2", barcode="FLAGGED-1")
    flag = factories.flag(flagged)
    factories.flag(factories.ticket(cup, block="S-L2", barcode="LATE-1"))
    factories.ticket(cup, block="N-L1", barcode="CANCELLED-1", status=Ticket.Status.CANCELLED)
    factories.tickets(league, 3, block="N-L1", prefix="LEAGUE")

    for n in range(6):
        assert scanned(cup, f"AWAY-{n:05d}", "F01", -60 + 9 * n) == ""
    for n in range(4):
        assert scanned(cup, f"HOME-{n:05d}", "A01", -20 + 5 * n) == ""
    assert scanned(cup, "AWAY-00000", "F02", -5) == Scan.Reason.ALREADY_INSIDE
    assert scanned(cup, "FORGED-1", "A02", -4) == Scan.Reason.UNKNOWN_TICKET
    assert scanned(cup, "LEAGUE-00000", "A02", -4) == Scan.Reason.WRONG_MATCH
    for minutes in (-30, -25):  # turned away twice: one holder prevented, not two
        assert scanned(cup, "FLAGGED-1", "A02", minutes) == Scan.Reason.FLAGGED
        assert scanned(cup, "CANCELLED-1", "A01", minutes) == Scan.Reason.CANCELLED
    assert scanned(cup, "LATE-1", "F03", -30) == Scan.Reason.FLAGGED
    assert scanned(cup, "HOME-00003", "F03", 70) == Scan.Reason.WRONG_END

    # Corrections: the flag cleared (another person) and the holder let in; a ticket used at
    # the gate and cancelled afterwards, then refused (it was used: not prevented).
    factories.flag(flagged, flag.ban, status=TicketFlag.Status.CLEARED)
    assert scanned(cup, "FLAGGED-1", "A02", -10) == ""
    ticket_cancel(ticket=Ticket.objects.get(barcode="HOME-00002"), reason="Resold by a tout")
    assert scanned(cup, "HOME-00002", "A01", 10) == Scan.Reason.CANCELLED

    # Late offline scans, merged at full time with the times they happened: LATE-1 admitted at
    # another gate before its online refusal (so it attended); AWAY-00006 refused as cancelled
    # and never admitted (prevented); AWAY-00001 admitted again (a conflict); an exit.
    offline(
        cup,
        ("LATE-1", "F02", -55, "admit", None),
        ("AWAY-00006", "F02", -50, "deny", "cancelled"),
        ("AWAY-00001", "F02", -58, "admit", None),
        ("UNKNOWN-9", "F02", -40, "deny", "unknown_ticket"),
    )

    for n in range(2):
        assert scanned(league, f"LEAGUE-{n:05d}", "A01", -30) == ""
    league_cancelled = Ticket.objects.get(barcode="LEAGUE-00002")
    ticket_cancel(ticket=league_cancelled, reason="Refunded")
    assert scanned(league, "LEAGUE-00002", "A01", -20) == Scan.Reason.CANCELLED
    return match_day


def test_the_dashboard_equals_a_full_recount_after_a_season_at_the_gates(season_played) -> None:
    cup, league = season_played.cup_tie, season_played.league_match

    figures = dashboard_against_recount(season_played.ground)

    # By hand: the cup's refusals (already inside, forged, another match's ticket, FLAGGED-1
    # twice, CANCELLED-1 twice, LATE-1, wrong end, HOME-00002 cancelled, and two offline);
    # prevented: CANCELLED-1 and AWAY-00006 (FLAGGED-1 and LATE-1 got in after all).
    assert figures[cup.pk] == (12, 2)
    assert figures[league.pk] == (1, 1)


def test_an_erased_holder_leaves_the_figures_as_they_were(season_played) -> None:
    before = dashboard_against_recount(season_played.ground)
    later = season_played.cup_tie.kickoff.date() + timedelta(days=3 * 366)

    retention_apply(today=later)

    assert Ticket.objects.filter(holder_erased_at__isnull=False).count() == Ticket.objects.count()
    assert dashboard_against_recount(season_played.ground) == before


def test_an_upgraded_install_gets_its_counts_from_the_scans(season_played) -> None:
    """The counts of scans stored before the counts were kept: the migration's step, which
    `safeground recount-entry` runs again, fills them from the rows."""
    before = dashboard_against_recount(season_played.ground)
    with connection.cursor() as cursor:  # as an install before the migration had them
        cursor.execute("DELETE FROM entry_scancount")
        cursor.execute("DELETE FROM entry_preventedcount")
    assert counts.differences() != []
    with pytest.raises(CommandError, match="differ from the scans"):
        call_command("recount_entry", "--check")

    call_command("recount_entry")

    assert ScanCount.objects.exists() and PreventedCount.objects.exists()
    assert dashboard_against_recount(season_played.ground) == before
    call_command("recount_entry", "--check")


# --- the log's figures ----------------------------------------------------------------------------


def log_recount(ids: list[int]) -> dict[str, object]:
    """The dashboard's log figures counted over the log's rows (ADR 0009's queries)."""
    by_category: dict[int, Counter[str]] = {pk: Counter() for pk in ids}
    for fixture_id, code in counted_incidents(ids, home_only=True).values_list(
        "fixture_id", "category__code"
    ):
        by_category[fixture_id][code or ""] += 1
    blocks = Counter(
        counted_incidents(ids, home_only=True)
        .filter(block__isnull=False)
        .values_list("block__code", flat=True)
    )
    assigned: dict[int, list[float]] = {pk: [] for pk in ids}
    resolved: dict[int, list[float]] = {pk: [] for pk in ids}
    for fixture_id, at, first_assigned, first_resolved in response_times(
        ids, home_only=True
    ).values_list("fixture_id", "observed_at", "first_assigned", "first_resolved"):
        if first_assigned is not None:
            assigned[fixture_id].append((first_assigned - at).total_seconds() / 60)
        if first_resolved is not None:
            resolved[fixture_id].append((first_resolved - at).total_seconds() / 60)
    outcomes = {
        home_only: {
            pk: Counter(
                counted_reports([pk], home_only=home_only)
                .filter(category__code__in=("arrest", "ejection"))
                .values_list("category__code", flat=True)
            )
            for pk in ids
        }
        for home_only in (True, False)
    }
    return {
        "incidents": {pk: dict(c) for pk, c in by_category.items()},
        "busiest": sorted(blocks.items(), key=lambda item: (-item[1], item[0]))[:10],
        "assigned": {pk: _median(v) for pk, v in assigned.items()},
        "resolved": {pk: _median(v) for pk, v in resolved.items()},
        "outcomes": outcomes,
    }


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def log_dashboard_against_recount(ground) -> dict[str, object]:  # type: ignore[no-untyped-def]
    shown = season(ground, SeasonFilter())
    ids = [m["id"] for m in shown.matches]
    counted = log_recount(ids)
    assert {m["id"]: m["incidents"] for m in shown.matches} == counted["incidents"]
    assert [(b["block"], b["incidents"]) for b in shown.busiest_blocks] == counted["busiest"]
    assert {m["id"]: m["median_to_assignment"] for m in shown.matches} == counted["assigned"]
    assert {m["id"]: m["median_to_resolution"] for m in shown.matches} == counted["resolved"]
    for home_only, by_match in counted["outcomes"].items():  # type: ignore[attr-defined]
        kept = arrests_and_ejections(ids, home_only=home_only)
        assert kept == {
            pk: {"arrests": c["arrest"], "ejections": c["ejection"]} for pk, c in by_match.items()
        }
    return counted


def test_the_logs_figures_equal_a_full_recount(match_day) -> None:
    cup, league, cast = match_day.cup_tie, match_day.league_match, match_day.cast
    loggist, police = cast["loggist"], cast["police"]

    def report(fixture, category, minutes, place, **fields):  # type: ignore[no-untyped-def]
        return factories.report(
            fixture,
            category=category,
            place=place,
            observed_at=fixture.kickoff + timedelta(minutes=minutes),
            author=fields.pop("author", loggist),
            **fields,
        )

    def at(fixture, minutes):  # type: ignore[no-untyped-def]
        return fixture.kickoff + timedelta(minutes=minutes)

    coins = report(cup, "missile", 11, Place(block="S-L2"), severity=3)
    flare = report(cup, "pyrotechnic", 20, Place(block="S-L2"), severity=3)
    report(cup, "missile", 15, Place(block="S-L3"), severity=4)
    report(cup, "segregation-breach", 27, Place(block="S-L3"), severity=5)
    report(cup, "alcohol", -40, Place(outside="Coach park"), home_only=True)
    hidden = report(cup, "disorder", 5, Place(block="N-L1"), home_only=True)
    report(cup, "arrest", 98, Place(concourse="S-L"), author=police)
    report(cup, "ejection", 70, Place(block="S-L1"))
    report(cup, "decision", 60, Place(outside="Control room"))
    fight = report(league, "disorder", 20, Place(block="N-L1"))
    report(league, "arrest", 30, Place(block="S-L1"), author=police, home_only=True)

    supervisor = cast["supervisor"]
    # Written later, seen earlier: the earlier assignment and resolution are the first ones.
    log_entry_assign(entry=coins, author=loggist, assignee=supervisor, observed_at=at(cup, 14))
    log_entry_escalate(entry=coins, author=loggist, to="police", observed_at=at(cup, 15))
    log_entry_assign(entry=coins, author=loggist, assignee=supervisor, observed_at=at(cup, 12))
    log_entry_set_status(entry=coins, author=police, status="resolved", observed_at=at(cup, 31))
    log_entry_set_status(entry=flare, author=loggist, status="resolved", observed_at=at(cup, 40))
    log_entry_set_status(entry=flare, author=loggist, status="closed", observed_at=at(cup, 35))
    log_entry_assign(entry=hidden, author=loggist, assignee=supervisor, observed_at=at(cup, 9))
    log_entry_assign(entry=fight, author=loggist, assignee=supervisor, observed_at=at(league, 23))
    # A correction is a new entry: the report still counts with the category it was reported with.
    log_entry_correct(entry=fight, author=loggist, note="It was a missile", category="missile")

    counted = log_dashboard_against_recount(match_day.ground)

    assert counted["incidents"][cup.pk] == {  # type: ignore[index]
        "missile": 2, "pyrotechnic": 1, "segregation-breach": 1, "alcohol": 1, "disorder": 1,
    }  # fmt: skip
    assert counted["incidents"][league.pk] == {"disorder": 1}  # type: ignore[index]
    assert counted["assigned"][cup.pk] == 2.5  # type: ignore[index]  # 1 and 4 minutes
    assert counted["resolved"][cup.pk] == 17.5  # type: ignore[index]  # 20 and 15 minutes

    # An upgraded install: the migration's step recounts them from the rows.
    with connection.cursor() as cursor:
        for table in ("reportsbycategory", "incidentsbyblock", "incidentresponse"):
            cursor.execute(f"DELETE FROM incidents_{table}")
    assert season(match_day.ground, SeasonFilter()).totals["incidents"] == 0
    log_counts.install()
    assert log_dashboard_against_recount(match_day.ground) == counted
