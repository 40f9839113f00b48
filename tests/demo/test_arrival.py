"""`safeground replay-arrival`: the cup tie's arrival through scan_decide, with the sample
tickets tests load (two seats a block and the planted holders)."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.db.models import Count

from safeground.entry.models import Scan, Ticket, TicketFlag
from safeground.entry.selectors import entry_counts

pytestmark = pytest.mark.django_db


def test_the_arrival_admits_most_and_turns_the_banned_away(cup_tie) -> None:
    out = StringIO()
    call_command("replay_arrival", speed=0, share=1.0, confirm=4, lanes=1, stdout=out)
    text = out.getvalue()
    assert "4 flagged holders confirmed as banned, 4 still open" in text
    reasons = dict(
        Scan.objects.filter(decision="deny").values_list("reason").annotate(n=Count("pk"))
    )
    assert reasons["banned"] == 4 and reasons["flagged"] == 4
    assert reasons["unknown_ticket"] == 25
    admitted = Ticket.objects.filter(fixture=cup_tie, inside=True).count()
    assert admitted == Scan.objects.filter(decision="admit").count()
    assert admitted == Ticket.objects.filter(fixture=cup_tie).count() - 8
    counts = entry_counts(cup_tie)
    assert counts["admitted"] == admitted and counts["prevented"] == 8
    assert f"Inside: {admitted:,} of" in text and "Prevented from attending: 8" in text

    # Again: every scan answered from the stored ones, nothing new stored.
    stored = Scan.objects.count()
    again = StringIO()
    call_command("replay_arrival", speed=0, share=1.0, lanes=1, stdout=again)
    assert Scan.objects.count() == stored and "answered from earlier scans" in again.getvalue()
    assert TicketFlag.objects.filter(status="confirmed").count() == 4
