"""Zones (home, away, buffer, by block or by rows), which blocks touch, and the layouts."""

from typing import Any

from safeground.yaml_file import Mapping, Sequence

from ..models import Block, Layout, Zone
from .blocks import ROW_LABEL_LENGTH
from .specs import (
    LAYOUT_USES,
    ZONE_KINDS,
    LayoutSpec,
    VenueCheck,
    ZoneMemberSpec,
    ZoneSpec,
    max_length,
)

_ZONE_FIELDS = ("code", "name", "names", "kind", "default", "blocks")


def read_zones(
    check: VenueCheck, items: list[tuple[str, Any, int]], block_rows: dict[str, list[str]]
) -> list[ZoneSpec]:
    zones: list[ZoneSpec] = []
    seen: dict[str, int] = {}
    for field, value, line in items:
        m = check.mapping(value, line, field, _ZONE_FIELDS)
        if m is None:
            continue
        code = check.text(m, "code", f"{field}.code", max_length=max_length(Zone, "code"))
        if code is not None:
            check.unique(seen, code, m.key_lines["code"], f"{field}.code", "zone")
        name = check.text(m, "name", f"{field}.name", max_length=max_length(Zone, "name"))
        names = check.names(m, "names", f"{field}.names", max_length=max_length(Zone, "name"))
        kind = check.text(m, "kind", f"{field}.kind", max_length=max_length(Zone, "kind"))
        if kind is not None and kind not in ZONE_KINDS:
            check.error(
                m.key_lines["kind"],
                f"{field}.kind",
                f"must be one of {', '.join(ZONE_KINDS)}, got '{kind}'",
            )
            kind = None
        is_default = m.get("default", False)
        if not isinstance(is_default, bool):
            check.error(
                m.key_lines["default"],
                f"{field}.default",
                f"must be true or false, got {is_default!r}",
            )
        members = []
        for item_field, item, item_line in check.items(
            m, "blocks", f"{field}.blocks", required=True
        ):
            member = _zone_member(check, item, item_line, item_field, block_rows)
            if member is not None:
                members.append(member)
        _check_members_once(check, members, field)
        if code is not None and name is not None and names is not None and kind is not None:
            zones.append(
                ZoneSpec(
                    code=code,
                    name=name,
                    names=names,
                    kind=kind,
                    is_default=bool(is_default),
                    members=[member for member, _ in members],
                )
            )
    return zones


def _zone_member(
    check: VenueCheck, value: Any, line: int, field: str, block_rows: dict[str, list[str]]
) -> tuple[ZoneMemberSpec, int] | None:
    """A block code (the whole block) or {block: CODE, rows: A-F} (only those rows)."""
    if not isinstance(value, Mapping):
        code = check.label(value, line, field, max_length=max_length(Block, "code"))
        if code is not None and code not in block_rows:
            check.error(line, field, f"unknown block '{code}'")
            return None
        return (ZoneMemberSpec(block=code, first_row="", last_row=""), line) if code else None
    m = check.mapping(value, line, field, ("block", "rows"))
    assert m is not None
    code = check.text(m, "block", f"{field}.block", max_length=max_length(Block, "code"))
    if code is not None and code not in block_rows:
        check.error(m.key_lines["block"], f"{field}.block", f"unknown block '{code}'")
        return None
    if "rows" not in m:
        return (ZoneMemberSpec(block=code, first_row="", last_row=""), line) if code else None
    rows_line, rows_field = m.key_lines["rows"], f"{field}.rows"
    text = check.label(m["rows"], rows_line, rows_field, max_length=2 * ROW_LABEL_LENGTH + 1)
    if code is None or text is None:
        return None
    first_row, _, last_row = (part.strip() for part in text.partition("-"))
    last_row = last_row or first_row
    rows = block_rows[code]
    for row in (first_row, last_row):
        if row not in rows:
            check.error(rows_line, rows_field, f"block '{code}' has no row '{row}'")
            return None
    if rows.index(first_row) > rows.index(last_row):
        check.error(rows_line, rows_field, f"row '{first_row}' comes after row '{last_row}'")
        return None
    return ZoneMemberSpec(block=code, first_row=first_row, last_row=last_row), line


def _check_members_once(
    check: VenueCheck, members: list[tuple[ZoneMemberSpec, int]], field: str
) -> None:
    """A block once per zone, or several row ranges of it, but not whole and by rows too."""
    seen: dict[tuple[str, str], int] = {}
    whole = {member.block for member, _ in members if not member.first_row}
    for member, line in members:
        key = (member.block, member.first_row)
        if key in seen or (member.first_row and member.block in whole):
            check.error(line, f"{field}.blocks", f"block '{member.block}' is listed twice")
        seen.setdefault(key, line)


def read_adjacency(
    check: VenueCheck, items: list[tuple[str, Any, int]], block_rows: dict[str, list[str]]
) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    seen: set[frozenset[str]] = set()
    for field, value, line in items:
        if not isinstance(value, Sequence) or len(value) != 2:
            check.error(line, field, f"must be a pair of block codes like [A1, A2], got {value!r}")
            continue
        codes = []
        for index, item in enumerate(value):
            item_field, item_line = f"{field}[{index}]", value.item_lines[index]
            code = check.label(item, item_line, item_field, max_length=max_length(Block, "code"))
            if code is not None and code not in block_rows:
                check.error(item_line, item_field, f"unknown block '{code}'")
            elif code is not None:
                codes.append(code)
        if len(codes) != 2:
            continue
        first, second = codes
        if first == second:
            check.error(line, field, f"block '{first}' cannot be adjacent to itself")
            continue
        # The same pair twice, either way round, is one adjacency: keep it once.
        if frozenset(codes) not in seen:
            seen.add(frozenset(codes))
            pairs.append((first, second))
    return pairs


def read_layouts(
    check: VenueCheck, items: list[tuple[str, Any, int]], zones: list[ZoneSpec]
) -> list[LayoutSpec]:
    """Each layout: zone code -> use, every zone known, no block in two of its zones."""
    by_code = {zone.code: zone for zone in zones}
    layouts: list[LayoutSpec] = []
    seen: dict[str, int] = {}
    for field, value, line in items:
        m = check.mapping(value, line, field, ("code", "name", "zones"))
        if m is None:
            continue
        code = check.text(m, "code", f"{field}.code", max_length=max_length(Layout, "code"))
        if code is not None:
            check.unique(seen, code, m.key_lines["code"], f"{field}.code", "layout")
        name = check.text(m, "name", f"{field}.name", max_length=max_length(Layout, "name"))
        uses: dict[str, str] = {}
        if "zones" not in m:
            check.error(m.line, f"{field}.zones", "missing")
        elif not isinstance(m["zones"], Mapping) or not m["zones"]:
            check.error(
                m.key_lines["zones"],
                f"{field}.zones",
                f"must be a mapping of zone code to {', '.join(LAYOUT_USES)}, got {m['zones']!r}",
            )
        else:
            uses = _layout_zones(check, m["zones"], f"{field}.zones", by_code)
        if code is not None and name is not None and uses:
            layouts.append(LayoutSpec(code=code, name=name, zones=uses))
    return layouts


def _layout_zones(
    check: VenueCheck, zones: Mapping, field: str, by_code: dict[str, ZoneSpec]
) -> dict[str, str]:
    uses: dict[str, str] = {}
    block_zone: dict[str, list[tuple[str, str]]] = {}
    ok = True
    for zone_code, use in zones.items():
        line, zone_field = zones.key_lines[zone_code], f"{field}.{zone_code}"
        zone = by_code.get(str(zone_code))
        if zone is None:
            check.error(line, zone_field, f"unknown zone '{zone_code}'")
            ok = False
            continue
        if use not in LAYOUT_USES:
            check.error(line, zone_field, f"must be one of {', '.join(LAYOUT_USES)}, got {use!r}")
            ok = False
            continue
        for member in zone.members:
            # Two zones may share a block by rows (a buffer of the front rows), never whole.
            for other, first_row in block_zone.get(member.block, []):
                if other != zone.code and (
                    not first_row or not member.first_row or first_row == member.first_row
                ):
                    check.error(
                        line, zone_field, f"block '{member.block}' is also in zone '{other}'"
                    )
                    ok = False
            block_zone.setdefault(member.block, []).append((zone.code, member.first_row))
        uses[zone.code] = use
    if ok and not {"home", "away"} <= set(uses.values()):
        check.error(zones.line, field, "a layout needs a home zone and an away zone")
        ok = False
    return uses if ok else {}
