"""Each zone's limit for the live counts: the Green Guide safe capacity (venues/capacity.py) and
the tickets sold for it, not its seats.

A zone warns when it is heading over its safe capacity: more tickets are sold for it than the
safe capacity allows, and the admissions have reached the warning share of that capacity. With
no more tickets than the safe capacity the turnstiles themselves keep the zone within it (a
ticket admits once), so a full, normal arrival raises no warning.
"""

from collections import Counter, defaultdict
from dataclasses import dataclass

from django.db.models import Count

from safeground.matches.models import Fixture
from safeground.matches.selectors import fixture_safe_capacities
from safeground.venues.models import Block, ZoneBlock

from .models import Ticket


@dataclass(frozen=True)
class ZoneLimit:
    safe_capacity: int
    sold: int

    @property
    def limit(self) -> int:
        """The most people the zone can hold today: its safe capacity, or fewer if fewer tickets
        were sold."""
        return min(self.safe_capacity, self.sold)

    def warns(self, admitted: int, warn_at: float) -> bool:
        return self.sold > self.safe_capacity and admitted >= warn_at * self.safe_capacity


def zone_limits(fixture: Fixture) -> dict[int, ZoneLimit]:
    """zone id -> its limit, for every zone the fixture uses."""
    safe = fixture_safe_capacities(fixture)
    sold_in: dict[int | None, Counter[str]] = defaultdict(Counter)
    for block_id, row, n in (
        Ticket.objects.filter(fixture=fixture, status=Ticket.Status.VALID)
        .values_list("block_id", "row")
        .annotate(n=Count("pk"))
        .values_list("block_id", "row", "n")
        .order_by()
    ):
        sold_in[block_id][row] += n
    rows_of = dict(Block.objects.filter(ground_id=fixture.ground_id).values_list("pk", "rows"))
    sold: Counter[int] = Counter()
    for zone_id, block_id, first, last in ZoneBlock.objects.filter(
        zone_id__in=list(safe)
    ).values_list("zone_id", "block_id", "first_row", "last_row"):
        by_row = sold_in.get(block_id, Counter())
        rows = list(rows_of.get(block_id) or ())
        if first and first in rows and (last or first) in rows:
            start, stop = sorted((rows.index(first), rows.index(last or first)))
            sold[zone_id] += sum(by_row[row] for row in rows[start : stop + 1])
        else:
            sold[zone_id] += sum(by_row.values())
    return {zone_id: ZoneLimit(capacity.safe, sold[zone_id]) for zone_id, capacity in safe.items()}
