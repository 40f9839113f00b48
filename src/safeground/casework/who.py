"""Who was there: the seats near where log entries place an incident, and their ticket holders.

The area is decided from the venue data alone:

- the entry's block, its rows (the entry's first to last row; the whole block when it gives
  none), widened by `rows` on each side, front to back as the block lists its rows;
- with `adjacent`, the blocks the venue file declares as touching (`BlockAdjacency`: the file's
  `adjacency` pairs, stored once each way round), at the same row positions, widened the same
  way. Blocks of a tier are numbered front to back alike, so row position N of one block sits
  beside row position N of the next; an adjacent block with fewer rows is clipped to its own.

One query reads the tickets of every seat in the area (whatever the match's size: a query
budget test holds it), with whether and when each holder went in (the admission the turnstile
recorded on the ticket: time and gate). Another counts them without reading a name: a look-up
shows how many people it covers before anyone is named, and names them a page at a time.
"""

from dataclasses import dataclass, field
from datetime import date, datetime

from django.conf import settings
from django.db.models import Count, Q

from safeground.entry.models import Ticket
from safeground.incidents.models import LogEntry
from safeground.venues.models import Block, BlockAdjacency, natural_key

MAX_ROWS = 10  # a wider net is a search of the whole stand, not of who was there
PAGE_SIZE = 100  # names on one page: a look-up is read a page at a time, each page recorded


def is_large(people: int) -> bool:
    """A look-up of more people than SAFEGROUND_WHO_LARGE: said plainly before the names are
    shown, and recorded as a large look-up."""
    return people > settings.SAFEGROUND_WHO_LARGE


@dataclass(frozen=True)
class Area:
    """Rows of one block: `rows` None is the whole block."""

    block: Block
    rows: tuple[str, ...] | None
    adjacent: bool  # reached through adjacency, not named by an entry

    @property
    def label(self) -> str:
        if self.rows is None:
            return f"{self.block.code}, every row"
        if len(self.rows) == 1:
            return f"{self.block.code}, row {self.rows[0]}"
        return f"{self.block.code}, rows {self.rows[0]}–{self.rows[-1]}"


@dataclass(frozen=True)
class Holder:
    ticket_id: int
    barcode: str
    block: str
    row: str
    seat: str
    name: str
    date_of_birth: date | None  # None: erased by retention
    status: str
    entered: bool
    entered_at: datetime | None
    gate: str
    adjacent: bool


@dataclass
class WhoCount:
    """How many people a look-up covers, and how many of them went in: no name."""

    rows: int
    adjacent: bool
    areas: list[Area]
    people: int
    entered: int

    @property
    def wide(self) -> bool:
        """Wider than the entries' own rows: asked again before anyone is named."""
        return self.rows > 0 or self.adjacent

    @property
    def large(self) -> bool:
        return is_large(self.people)


@dataclass
class WhoWasThere:
    """One page of a look-up's names; `people` and `entered` are of the whole look-up."""

    entries: list[LogEntry]
    rows: int
    adjacent: bool
    areas: list[Area] = field(default_factory=list)
    holders: list[Holder] = field(default_factory=list)
    people: int = 0
    entered: int = 0
    page: int = 1
    pages: int = 1

    @property
    def first(self) -> int:
        """The place in the whole look-up of the page's first name (1-based)."""
        return (self.page - 1) * PAGE_SIZE + 1

    @property
    def last(self) -> int:
        return self.first + len(self.holders) - 1

    @property
    def large(self) -> bool:
        return is_large(self.people)


def _span(rows: list[str], first: int, last: int, widen: int) -> tuple[str, ...]:
    return tuple(rows[max(0, first - widen) : min(len(rows), last + widen + 1)])


def _positions(entry: LogEntry, block: Block) -> tuple[int, int] | None:
    """The entry's rows as positions in its block (None: the whole block)."""
    rows = list(block.rows or [])
    if not entry.first_row or not rows or entry.first_row not in rows:
        return None
    first = rows.index(entry.first_row)
    last = rows.index(entry.last_row) if entry.last_row in rows else first
    return min(first, last), max(first, last)


def areas_for(entries: list[LogEntry], *, rows: int, adjacent: bool) -> list[Area]:
    """The area the entries and the distance cover, one Area per block (rows merged)."""
    spans: dict[int, tuple[Block, set[str] | None, bool]] = {}

    def add(block: Block, wanted: tuple[str, ...] | None, is_adjacent: bool) -> None:
        current = spans.get(block.pk)
        if current is None:
            spans[block.pk] = (block, None if wanted is None else set(wanted), is_adjacent)
            return
        _, have, was_adjacent = current
        merged = None if have is None or wanted is None else have | set(wanted)
        spans[block.pk] = (block, merged, was_adjacent and is_adjacent)

    placed = [(entry, entry.block) for entry in entries if entry.block is not None]
    neighbours: dict[int, list[Block]] = {}
    if adjacent and placed:
        ids = {block.pk for _, block in placed}
        pairs = BlockAdjacency.objects.filter(Q(block__in=ids) | Q(neighbour__in=ids))
        pairs = pairs.select_related("block", "neighbour")
        for pair in pairs:
            neighbours.setdefault(pair.block_id, []).append(pair.neighbour)
            neighbours.setdefault(pair.neighbour_id, []).append(pair.block)
    for entry, block in placed:
        positions = _positions(entry, block)
        if positions is None:
            add(block, None, False)
        else:
            add(block, _span(list(block.rows), *positions, rows), False)
        for other in neighbours.get(block.pk, []):
            if positions is None or not other.rows:
                add(other, None, True)
            else:
                add(other, _span(list(other.rows), *positions, rows) or None, True)

    def in_order(block: Block, wanted: set[str] | None) -> tuple[str, ...] | None:
        if wanted is None:
            return None
        order = list(block.rows or [])
        return tuple(sorted(wanted, key=lambda r: order.index(r) if r in order else len(order)))

    return [
        Area(block=block, rows=in_order(block, wanted), adjacent=is_adjacent)
        for block, wanted, is_adjacent in sorted(
            spans.values(), key=lambda s: natural_key(s[0].code)
        )
    ]


def _seated_in(areas: list[Area]) -> Q:
    where = Q()
    for area in areas:
        where |= (
            Q(block_id=area.block.pk)
            if area.rows is None
            else Q(block_id=area.block.pk, row__in=area.rows)
        )
    return where


def count_in(fixture_id: int, areas: list[Area]) -> tuple[int, int]:
    """How many tickets of the match are seated in the areas, and how many went in: one query,
    no name read."""
    if not areas:
        return 0, 0
    found = Ticket.objects.filter(_seated_in(areas), fixture_id=fixture_id).aggregate(
        people=Count("pk"), entered=Count("entered_at")
    )
    return found["people"], found["entered"]


def holders_in(fixture_id: int, areas: list[Area]) -> list[Holder]:
    """The tickets of the match seated in the areas, in one query."""
    if not areas:
        return []
    where = _seated_in(areas)
    adjacent = {area.block.pk for area in areas if area.adjacent}
    codes = {area.block.pk: area.block.code for area in areas}
    found = Ticket.objects.filter(where, fixture_id=fixture_id).values_list(
        "pk",
        "barcode",
        "block_id",
        "row",
        "seat",
        "holder_name",
        "holder_dob",
        "status",
        "inside",
        "entered_at",
        "entered_gate__name",
    )
    holders = [
        Holder(pk, barcode, codes[block], row, seat, name, dob, status,
               entered_at is not None, entered_at, gate or "", block in adjacent)
        for pk, barcode, block, row, seat, name, dob, status, _inside, entered_at, gate in found
    ]  # fmt: skip
    return sorted(holders, key=lambda h: (natural_key(h.block), h.row.zfill(4), h.seat.zfill(6)))
