"""The season dashboard reads the gates' counts the database keeps as scans are stored
(entry/counts.py, ADR 0022): after online scans, late offline scans merged with their own times,
corrections (a flag cleared, a ticket cancelled after it was used) and a holder erased, its
figures equal a full recount of the raw rows, on SQLite and on PostgreSQL."""

import uuid
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from safeground.entry import counts
from safeground.entry.models import PreventedCount, Scan, ScanCount, Ticket, TicketFlag
from safeground.entry.runtime import lookups
from safeground.entry.scans import offline_scans_upload
from safeground.entry.services import ticket_cancel
from safeground.matches.models import Fixture
from safeground.privacy.services import retention_apply
from safeground.reports.season import SeasonFilter, season
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
