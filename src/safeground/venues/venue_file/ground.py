"""The ground (its plan, pitch and rates of passage) and its stands and tiers."""

import re
from typing import Any

from ..models import Ground, Stand, Tier
from ..ticket_format import CHECKS
from .specs import (
    FlowSpec,
    GroundSpec,
    StandSpec,
    TicketsSpec,
    TierSpec,
    VenueCheck,
    max_length,
)


def read_ground(check: VenueCheck, value: Any, line: int) -> GroundSpec | None:
    m = check.mapping(
        value,
        line,
        "ground",
        ("code", "name", "layout_note", "plan", "pitch", "capacity", "tickets"),
    )
    if m is None:
        return None
    code = check.text(m, "code", "ground.code", max_length=max_length(Ground, "code"))
    if code is not None and not re.fullmatch(r"[-a-zA-Z0-9_]+", code):
        check.error(
            m.key_lines["code"], "ground.code", f"must be letters, digits, - and _, got {code!r}"
        )
        code = None
    name = check.text(m, "name", "ground.name", max_length=max_length(Ground, "name"))
    note = check.text(
        m,
        "layout_note",
        "ground.layout_note",
        max_length=max_length(Ground, "layout_note"),
        default="",
    )
    width, height = 1000, 1000
    if "plan" in m:
        plan = check.mapping(m["plan"], m.key_lines["plan"], "ground.plan", ("width", "height"))
        if plan is not None:
            width = check.whole_number(plan, "width", "ground.plan.width", minimum=1) or 0
            height = check.whole_number(plan, "height", "ground.plan.height", minimum=1) or 0
    pitch = ""
    if "pitch" in m:
        pitch = polygon(check, m["pitch"], m.key_lines["pitch"], "ground.pitch") or ""
    flow = FlowSpec()
    if "capacity" in m:
        flow = read_flow(check, m["capacity"], m.key_lines["capacity"]) or flow
    tickets = TicketsSpec()
    if "tickets" in m:
        tickets = read_tickets(check, m["tickets"], m.key_lines["tickets"]) or tickets
    if code is None or name is None or note is None:
        return None
    return GroundSpec(
        code=code,
        name=name,
        layout_note=note,
        plan_width=width,
        plan_height=height,
        pitch=pitch,
        flow=flow,
        tickets=tickets,
        line=m.key_lines["code"],
    )


def read_stands(
    check: VenueCheck, items: list[tuple[str, Any, int]]
) -> tuple[list[StandSpec], dict[str, set[str]]]:
    """The valid stands, and the tier codes of every declared stand (valid or not)."""
    stands: list[StandSpec] = []
    tiers_of: dict[str, set[str]] = {}
    seen: dict[str, int] = {}
    for field, value, line in items:
        m = check.mapping(
            value, line, field, ("code", "name", "names", "tiers", "p_factor", "s_factor")
        )
        if m is None:
            continue
        p_factor = check.number(m, "p_factor", f"{field}.p_factor", low=0, high=1, default=1)
        s_factor = check.number(m, "s_factor", f"{field}.s_factor", low=0, high=1, default=1)
        code = check.text(m, "code", f"{field}.code", max_length=max_length(Stand, "code"))
        if code is not None:
            check.unique(seen, code, m.key_lines["code"], f"{field}.code", "stand")
        name = check.text(m, "name", f"{field}.name", max_length=max_length(Stand, "name"))
        names = check.names(m, "names", f"{field}.names", max_length=max_length(Stand, "name"))
        tiers: list[TierSpec] = []
        tier_seen: dict[str, int] = {}
        tier_items = check.items(m, "tiers", f"{field}.tiers", required=True)
        if "tiers" in m and not tier_items:
            check.error(m.key_lines["tiers"], f"{field}.tiers", "a stand needs at least one tier")
        for tier_field, tier_value, tier_line in tier_items:
            tm = check.mapping(tier_value, tier_line, tier_field, ("code", "name", "names"))
            if tm is None:
                continue
            tier_code = check.text(
                tm, "code", f"{tier_field}.code", max_length=max_length(Tier, "code")
            )
            tier_name = check.text(
                tm, "name", f"{tier_field}.name", max_length=max_length(Tier, "name")
            )
            tier_names = check.names(
                tm, "names", f"{tier_field}.names", max_length=max_length(Tier, "name")
            )
            if tier_code is not None:
                check.unique(
                    tier_seen, tier_code, tm.key_lines["code"], f"{tier_field}.code", "tier"
                )
            if tier_code is not None and tier_name is not None and tier_names is not None:
                tiers.append(TierSpec(code=tier_code, name=tier_name, names=tier_names))
        if code is not None:
            tiers_of.setdefault(code, set()).update(tier.code for tier in tiers)
        if code is not None and name is not None and names is not None:
            stands.append(
                StandSpec(
                    code=code,
                    name=name,
                    names=names,
                    tiers=tiers,
                    p_factor=p_factor if p_factor is not None else 1.0,
                    s_factor=s_factor if s_factor is not None else 1.0,
                )
            )
    return stands, tiers_of


_FLOW_FIELDS = ("level_rate", "stair_rate", "egress_minutes", "evacuation_minutes")


def read_flow(check: VenueCheck, value: Any, line: int) -> FlowSpec | None:
    m = check.mapping(value, line, "ground.capacity", _FLOW_FIELDS)
    if m is None:
        return None
    default = FlowSpec()
    level = check.whole_number(
        m, "level_rate", "ground.capacity.level_rate", minimum=1, default=default.level_rate
    )
    stair = check.whole_number(
        m, "stair_rate", "ground.capacity.stair_rate", minimum=1, default=default.stair_rate
    )
    egress = check.number(
        m, "egress_minutes", "ground.capacity.egress_minutes", low=1, high=8, default=8
    )
    evacuation = check.number(
        m, "evacuation_minutes", "ground.capacity.evacuation_minutes", low=2.5, high=8, default=8
    )
    if level is None or stair is None or egress is None or evacuation is None:
        return None
    return FlowSpec(
        level_rate=level, stair_rate=stair, egress_minutes=egress, evacuation_minutes=evacuation
    )


def read_tickets(check: VenueCheck, value: Any, line: int) -> TicketsSpec | None:
    """The issuing system's ticket format: a barcode that fits it but was never issued is
    refused as forged."""
    m = check.mapping(value, line, "ground.tickets", ("prefix", "length", "check"))
    if m is None:
        return None
    prefix = check.text(
        m, "prefix", "ground.tickets.prefix", max_length=max_length(Ground, "ticket_prefix"),
        default="",
    )  # fmt: skip
    length = check.whole_number(m, "length", "ground.tickets.length", minimum=0, default=0)
    kind = check.text(m, "check", "ground.tickets.check", max_length=10, default="none")
    if kind is not None and kind not in CHECKS:
        check.error(
            m.key_lines["check"], "ground.tickets.check", f"must be one of {', '.join(CHECKS)}"
        )
        return None
    if prefix is None or length is None or kind is None:
        return None
    return TicketsSpec(prefix=prefix, length=length, check=kind)


def point_numbers(text: str) -> list[float] | None:
    try:
        return [float(part) for part in text.split(",")]
    except ValueError:
        return None


def polygon(check: VenueCheck, value: Any, line: int, field: str) -> str | None:
    """SVG polygon points, 'x,y x,y x,y ...': at least three points, numbers only."""
    if not isinstance(value, str):
        check.error(line, field, f"must be polygon points like '0,0 10,0 10,10', got {value!r}")
        return None
    points = value.split()
    for point in points:
        numbers = point_numbers(point)
        if numbers is None or len(numbers) != 2:
            check.error(line, field, f"point {point!r} is not x,y in numbers")
            return None
    if len(points) < 3:
        check.error(line, field, f"needs at least 3 points, got {len(points)}")
        return None
    return " ".join(points)
