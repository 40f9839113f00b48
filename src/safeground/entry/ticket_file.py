"""Read a ticketing system's CSV export and check all of it before anything is written.

One line per ticket, with a header line naming the columns (any order, any case; columns not
listed here are ignored):

    barcode            the ticket's barcode (required; unique in the file)
    name               the holder's full name, or first_name and last_name (also: forename, surname)
    date_of_birth      the holder's date of birth: 1990-03-14 or 14/03/1990 (also: dob)
    block, row, seat   a reserved seat (block code as in the venue file) ...
    area               ... or an unreserved area (one of the two, not both)
    end                home or away

The file may start with a byte-order mark, be separated by `,` or `;` (or tabs), and quote fields
(a quoted field may hold the separator). Every problem is collected, not just the first, as
`line N: FIELD: what is wrong`, so whoever exports the file can fix it in one pass.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import NamedTuple

from django.utils.translation import gettext as _

from safeground.bans.dates import parse_date
from safeground.csv_file import Header, Row, decoded, header_read, line_name, lines
from safeground.errors import FileRefused, too_long

from .rules import BARCODE_PATTERN

Progress = Callable[[str, int, int], None]

ALIASES: dict[str, str] = {
    "barcode": "barcode",
    "ticket": "barcode",
    "ticket_barcode": "barcode",
    "name": "name",
    "holder": "name",
    "holder_name": "name",
    "full_name": "name",
    "first_name": "first_name",
    "first_names": "first_name",
    "forename": "first_name",
    "given_name": "first_name",
    "last_name": "last_name",
    "surname": "last_name",
    "family_name": "last_name",
    "date_of_birth": "date_of_birth",
    "dob": "date_of_birth",
    "birth_date": "date_of_birth",
    "block": "block",
    "section": "block",
    "row": "row",
    "seat": "seat",
    "seat_number": "seat",
    "area": "area",
    "unreserved_area": "area",
    "end": "end",
    "stand_end": "end",
}
ENDS = {"home": "home", "h": "home", "away": "away", "a": "away"}
BARCODE = re.compile(BARCODE_PATTERN)
PROGRESS_EVERY = 5000


class TicketFileError(FileRefused):
    """The file is refused; `errors` lists every problem as `line N: field: message`."""

    code = "ticket_file_refused"


@dataclass(frozen=True)
class BlockInfo:
    id: int
    rows: tuple[str, ...]
    seats_per_row: int
    first_seat: int


class TicketRow(NamedTuple):
    line: int
    barcode: str
    holder_name: str
    holder_dob: date
    block_id: int | None
    row: str
    seat: str
    area: str
    end: str


def _columns_check(header: Header) -> None:
    """What a ticket file needs beyond its required columns: a name, and a place."""
    columns, found = set(header.columns), header.found
    if "name" not in columns and not {"first_name", "last_name"} <= columns:
        header.errors.append(
            f"{line_name(1)}: header: "
            + _("no 'name' column, nor first_name and last_name (%(found)s)") % {"found": found}
        )
    if "block" not in columns and "area" not in columns:
        header.errors.append(
            f"{line_name(1)}: header: "
            + _("no 'block' (with row and seat) or 'area' column (%(found)s)") % {"found": found}
        )
    if "block" in columns and not {"row", "seat"} <= columns:
        header.errors.append("line 1: header: a 'block' column needs 'row' and 'seat' columns")


def parse_tickets(
    data: bytes,
    *,
    blocks: dict[str, BlockInfo],
    today: date,
    progress: Progress | None = None,
) -> list[TicketRow]:
    """Every ticket of the file, or TicketFileError with every problem found."""
    text, errors = decoded(data)
    if errors:
        raise TicketFileError(errors)
    if not text.strip():
        raise TicketFileError([f"{line_name(1)}: file: " + _("is empty (no header, no tickets)")])
    header = header_read(text, ALIASES, ("barcode", "date_of_birth", "end"))
    if header.width:  # the header line was read: every problem of it, together
        _columns_check(header)
    if header.errors:
        raise TicketFileError(header.errors)
    total = text.count("\n") + 1
    rows: list[TicketRow] = []
    barcodes: dict[str, int] = {}
    seats: dict[tuple[int, str, str], int] = {}
    for start, fields in lines(header, errors):
        if progress and len(rows) % PROGRESS_EVERY == 0:
            progress("checked", start, total)
        row = _row(Row(fields, line_name(start), header, errors), start, blocks, today)
        if row is None:
            continue
        if row.barcode in barcodes:
            first = barcodes[row.barcode]
            said = _("'%(barcode)s' is also on line %(first)s")
            errors.append(
                f"{line_name(start)}: barcode: {said % {'barcode': row.barcode, 'first': first}}"
            )
            continue
        barcodes[row.barcode] = start
        if row.block_id is not None:
            seat_key = (row.block_id, row.row, row.seat)
            if seat_key in seats:
                said = _("row %(row)s seat %(seat)s of this block is also sold on line %(first)s")
                slots = {"row": row.row, "seat": row.seat, "first": seats[seat_key]}
                errors.append(f"{line_name(start)}: seat: {said % slots}")
                continue
            seats[seat_key] = start
        rows.append(row)
    if errors:
        raise TicketFileError(errors)
    if not rows:
        raise TicketFileError([f"{line_name(2)}: file: " + _("has a header but no tickets")])
    if progress:
        progress("checked", total, total)
    return rows


def _row(fields: Row, line: int, blocks: dict[str, BlockInfo], today: date) -> TicketRow | None:
    if not fields.complete():
        return None
    before = len(fields.errors)
    get, bad = fields.get, fields.bad
    barcode = get("barcode")
    if not barcode:
        bad("barcode", _("is missing"))
    elif not BARCODE.match(barcode):
        bad(
            "barcode",
            _("'%(barcode)s' must be 1 to 64 printable characters without spaces")
            % {"barcode": barcode[:70]},
        )
    if "name" in fields.header.columns:
        name = " ".join(get("name").split())
    else:
        name = " ".join(f"{get('first_name')} {get('last_name')}".split())
    if not name:
        bad("name", _("is missing"))
    elif len(name) > 200:
        bad("name", too_long(len(name), 200))
    dob, problem = parse_date(get("date_of_birth"), today=today)
    if problem:
        bad("date_of_birth", problem)
    end = ENDS.get(get("end").lower(), "")
    if not end:
        bad("end", _("'%(end)s' must be home or away") % {"end": get("end")})
    block_code, row_label, seat, area = get("block"), get("row"), get("seat"), get("area")
    block_id = _place_check(blocks, block_code, row_label, seat, area, bad)
    if len(fields.errors) > before or dob is None:
        return None
    return TicketRow(
        line=line,
        barcode=barcode,
        holder_name=name,
        holder_dob=dob,
        block_id=block_id,
        row=row_label if block_id else "",
        seat=str(int(seat)) if block_id else "",
        area=area if not block_id else "",
        end=end,
    )


def _place_check(
    blocks: dict[str, BlockInfo],
    block_code: str,
    row_label: str,
    seat: str,
    area: str,
    bad: Callable[[str, str], None],
) -> int | None:
    """The block of a reserved seat (None for an unreserved area or a block not at this ground),
    each problem of the place reported through `bad`: a seat in a block of the ground, on one
    of its rows and among its seats, or an unreserved area; never both."""
    if block_code and area:
        bad("area", _("give a seat (block, row, seat) or an unreserved area, not both"))
    elif block_code:
        info = blocks.get(block_code)
        if info is None:
            bad("block", _("no block '%(block)s' at this ground") % {"block": block_code})
            return None
        if not row_label:
            bad("row", _("is missing for a seat in a block"))
        elif info.rows and row_label not in info.rows:
            bad(
                "row",
                _("block %(block)s has no row '%(row)s'") % {"block": block_code, "row": row_label},
            )
        if not seat:
            bad("seat", _("is missing for a seat in a block"))
        elif not seat.isdigit():
            bad("seat", _("'%(seat)s' is not a seat number") % {"seat": seat})
        elif info.seats_per_row and not (
            info.first_seat <= int(seat) < info.first_seat + info.seats_per_row
        ):
            last = info.first_seat + info.seats_per_row - 1
            bad(
                "seat",
                _("block %(block)s has seats %(first)s to %(last)s")
                % {"block": block_code, "first": info.first_seat, "last": last},
            )
        return info.id
    elif area:
        if row_label or seat:
            bad("row", _("an unreserved area has no row or seat"))
        elif len(area) > 100:
            bad("area", too_long(len(area), 100))
    else:
        bad("block", _("give a seat (block, row, seat) or an unreserved area"))
    return None
