"""Blocks: capacity, rows and seats, and the lists of blocks other sections name (`serves`)."""

import re
from typing import Any

from safeground.yaml_file import Mapping, Sequence

from ..models import Block, Stand, Tier, ZoneBlock
from .ground import polygon
from .specs import MAX_ROWS, MAX_SEATS, MAX_SEATS_PER_ROW, BlockSpec, VenueCheck, max_length

_BLOCK_FIELDS = (
    "code",
    "name",
    "names",
    "stand",
    "tier",
    "capacity",
    "rows",
    "seats_per_row",
    "first_seat",
    "shape",
)


def read_blocks(
    check: VenueCheck, items: list[tuple[str, Any, int]], tiers_of: dict[str, set[str]]
) -> tuple[list[BlockSpec], set[str]]:
    """The valid blocks, and the codes of all declared blocks (valid or not)."""
    blocks: list[BlockSpec] = []
    seen: dict[str, int] = {}
    total_seats, over = 0, False
    for field, value, line in items:
        m = check.mapping(value, line, field, _BLOCK_FIELDS)
        if m is None:
            continue
        code = check.text(m, "code", f"{field}.code", max_length=max_length(Block, "code"))
        if code is not None:
            check.unique(seen, code, m.key_lines["code"], f"{field}.code", "block")
        name = check.text(
            m, "name", f"{field}.name", max_length=max_length(Block, "name"), default=code or ""
        )
        names = check.names(m, "names", f"{field}.names", max_length=max_length(Block, "name"))
        stand, tier = _stand_and_tier(check, m, field, tiers_of)
        capacity = check.whole_number(m, "capacity", f"{field}.capacity", minimum=0)
        rows = _rows(check, m, f"{field}.rows")
        seats_per_row = _seats_per_row(check, m, field)
        if capacity is not None:
            total_seats += capacity
            if total_seats > MAX_SEATS and not over:
                check.error(
                    m.key_lines["capacity"],
                    f"{field}.capacity",
                    f"the blocks so far hold {total_seats:,} seats; a ground at most {MAX_SEATS:,}",
                )
                over = True
        first_seat = check.whole_number(
            m, "first_seat", f"{field}.first_seat", minimum=0, default=1
        )
        # Fewer seats than rows x seats is normal (wheelchair bays, camera platforms); more is not.
        if capacity and rows and seats_per_row and capacity > len(rows) * seats_per_row:
            check.error(
                m.key_lines["capacity"],
                f"{field}.capacity",
                f"{capacity} is more than {len(rows)} rows x {seats_per_row} seats per row",
            )
        shape = _shape(check, m, field)
        if (
            code is None
            or name is None
            or names is None
            or stand is None
            or tier is None
            or capacity is None
            or rows is None
            or seats_per_row is None
            or first_seat is None
            or shape is None
        ):
            continue
        blocks.append(
            BlockSpec(
                code=code,
                names=names,
                name=name,
                stand=stand,
                tier=tier,
                capacity=capacity,
                rows=rows,
                seats_per_row=seats_per_row,
                first_seat=first_seat,
                shape=shape,
            )
        )
    return blocks, set(seen)


def _stand_and_tier(
    check: VenueCheck, m: Mapping, field: str, tiers_of: dict[str, set[str]]
) -> tuple[str | None, str | None]:
    """The block's stand and tier, each None unless the file declares it (the tier in that
    stand)."""
    stand = check.text(m, "stand", f"{field}.stand", max_length=max_length(Stand, "code"))
    if stand is not None and stand not in tiers_of:
        check.error(m.key_lines["stand"], f"{field}.stand", f"unknown stand '{stand}'")
        stand = None
    tier = check.text(m, "tier", f"{field}.tier", max_length=max_length(Tier, "code"))
    if stand is not None and tier is not None and tier not in tiers_of[stand]:
        check.error(m.key_lines["tier"], f"{field}.tier", f"stand '{stand}' has no tier '{tier}'")
        tier = None
    return stand, tier


def _seats_per_row(check: VenueCheck, m: Mapping, field: str) -> int | None:
    seats_per_row = check.whole_number(
        m, "seats_per_row", f"{field}.seats_per_row", minimum=0, default=0
    )
    if seats_per_row is not None and seats_per_row > MAX_SEATS_PER_ROW:
        check.error(
            m.key_lines["seats_per_row"],
            f"{field}.seats_per_row",
            f"{seats_per_row:,}; at most {MAX_SEATS_PER_ROW}",
        )
        return None
    return seats_per_row


def _shape(check: VenueCheck, m: Mapping, field: str) -> str | None:
    """The block's outline on the ground's plan, as SVG polygon points: required."""
    if "shape" not in m:
        check.error(m.line, f"{field}.shape", "missing")
        return None
    return polygon(check, m["shape"], m.key_lines["shape"], f"{field}.shape")


_ROW_RANGE = re.compile(r"([A-Z])-([A-Z])|(\d+)-(\d+)")
ROW_LABEL_LENGTH = max_length(ZoneBlock, "first_row")


def _expand_rows(text: str) -> list[str] | None:
    """'A-Y' -> A, B, ..., Y; '1-30' -> 1, ..., 30; a single label stays as it is."""
    match = _ROW_RANGE.fullmatch(text)
    if match is None:
        return [text] if len(text) <= ROW_LABEL_LENGTH and "-" not in text else None
    if match.group(1):
        first, last = ord(match.group(1)), ord(match.group(2))
        return [chr(c) for c in range(first, last + 1)] if first <= last else None
    first, last = int(match.group(3)), int(match.group(4))
    if last - first >= MAX_ROWS:  # refused by _rows; never expanded ('1-99999999')
        return [str(n) for n in range(first, first + MAX_ROWS + 1)]
    return [str(n) for n in range(first, last + 1)] if first <= last else None


def _rows(check: VenueCheck, m: Mapping, field: str) -> list[str] | None:
    if "rows" not in m:
        return []
    value, line = m["rows"], m.key_lines["rows"]
    if isinstance(value, str):
        rows = _expand_rows(value.strip())
        if rows is None:
            check.error(line, field, f"must be a range like 'A-Y' or '1-30', got {value!r}")
        elif len(rows) > MAX_ROWS:
            check.error(line, field, f"more than {MAX_ROWS} rows, the limit for a block")
            return None
        return rows
    if isinstance(value, Sequence) and len(value) > MAX_ROWS:
        check.error(line, field, f"{len(value)} rows; at most {MAX_ROWS} in a block")
        return None
    if not isinstance(value, Sequence):
        check.error(line, field, f"must be a range like 'A-Y' or a list of labels, got {value!r}")
        return None
    rows = []
    seen: dict[str, int] = {}
    for index, item in enumerate(value):
        label = check.label(
            item, value.item_lines[index], f"{field}[{index}]", max_length=ROW_LABEL_LENGTH
        )
        if label is not None:
            check.unique(seen, label, value.item_lines[index], f"{field}[{index}]", "row")
            rows.append(label)
    return rows if len(rows) == len(value) else None


def block_list(
    check: VenueCheck, m: Mapping, field: str, block_rows: dict[str, list[str]]
) -> list[str]:
    """Block codes listed under `serves`: each must be declared, and listed once."""
    codes: list[str] = []
    seen: set[str] = set()
    for item_field, value, line in check.items(m, "serves", field, required=False):
        code = check.label(value, line, item_field, max_length=max_length(Block, "code"))
        if code is None:
            continue
        if code not in block_rows:
            check.error(line, item_field, f"unknown block '{code}'")
            continue
        if code in seen:
            check.error(line, item_field, f"block '{code}' is listed twice")
            continue
        seen.add(code)
        codes.append(code)
    return codes
