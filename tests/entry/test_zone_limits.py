"""Each zone's limit in the live counts: its safe capacity and the tickets sold for it, not its
seats. A sold-out zone that fills as it should raises no warning; one sold over its safe capacity
does as it fills."""

import pytest

from safeground.entry.models import Ticket
from safeground.entry.selectors import entry_counts
from safeground.entry.zone_limits import zone_limits
from tests import factories

pytestmark = pytest.mark.django_db


def away(counts: dict) -> dict:
    return next(zone for zone in counts["zones"] if zone["code"] == "away-south-cup")


def test_a_zone_sold_out_to_its_safe_capacity_that_fills_does_not_warn(match_day) -> None:
    cup = match_day.cup_tie
    for block in ("S-L1", "S-L2", "S-L3"):  # the cup's away section: 600 seats, all sold
        factories.tickets(cup, 200, block=block, prefix=block)
    factories.ticket(cup, block="S-L1", status=Ticket.Status.CANCELLED, barcode="GONE")
    valid = Ticket.objects.filter(fixture=cup, status="valid").order_by("pk")
    Ticket.objects.filter(pk__in=list(valid.values_list("pk", flat=True)[:560])).update(
        inside=True
    )  # 93% of them in
    counts = entry_counts(cup)
    zone = away(counts)
    admitted = Ticket.objects.filter(fixture=cup, inside=True).count()
    assert (zone["seats"], zone["capacity"], zone["sold"], zone["admitted"]) == (
        600,
        600,
        600,
        admitted,
    )
    assert admitted / 600 > 0.9 and zone["warning"] is False and counts["warnings"] == []
    assert zone["share"] == round(admitted / 600, 3)


def test_a_zone_sold_over_its_safe_capacity_warns_as_it_fills(match_day, settings) -> None:
    cup = match_day.cup_tie
    # Gate F's 10 turnstiles at 50 an hour let 500 into the away section: its safe capacity.
    settings.SAFEGROUND_TURNSTILE_RATE = 50
    for block in ("S-L1", "S-L2", "S-L3"):
        factories.tickets(cup, 200, block=block, prefix=block)
    limit = zone_limits(cup)[cup.zones.get(zone__code="away-south-cup").zone_id]
    assert (limit.safe_capacity, limit.sold, limit.limit) == (500, 600, 500)
    inside = Ticket.objects.filter(fixture=cup).order_by("pk")
    Ticket.objects.filter(pk__in=list(inside.values_list("pk", flat=True)[:449])).update(
        inside=True
    )
    assert away(entry_counts(cup))["warning"] is False  # 449 < 90% of 500
    Ticket.objects.filter(pk=inside.filter(inside=False).first().pk).update(inside=True)  # type: ignore[union-attr]
    counts = entry_counts(cup)
    assert away(counts)["warning"] is True
    assert counts["warnings"] == [
        "Away section (cup): 450 in of a safe capacity of 500 with 600 tickets sold, warning at 90%"
    ]
