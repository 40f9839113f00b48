"""Gates and their turnstiles, concourses and exits: the places that serve blocks."""

from typing import Any

from safeground.yaml_file import Mapping, Sequence

from ..models import Concourse, Exit, Gate, Turnstile
from .blocks import block_list
from .ground import point_numbers
from .specs import ConcourseSpec, ExitSpec, GateSpec, VenueCheck, max_length

_GATE_FIELDS = ("code", "name", "names", "position", "turnstiles", "serves")


def read_gates(
    check: VenueCheck, items: list[tuple[str, Any, int]], block_rows: dict[str, list[str]]
) -> list[GateSpec]:
    gates: list[GateSpec] = []
    seen: dict[str, int] = {}
    for field, value, line in items:
        m = check.mapping(value, line, field, _GATE_FIELDS)
        if m is None:
            continue
        code = check.text(m, "code", f"{field}.code", max_length=max_length(Gate, "code"))
        if code is not None:
            check.unique(seen, code, m.key_lines["code"], f"{field}.code", "gate")
        name = check.text(m, "name", f"{field}.name", max_length=max_length(Gate, "name"))
        names = check.names(m, "names", f"{field}.names", max_length=max_length(Gate, "name"))
        position = check.text(
            m, "position", f"{field}.position", max_length=max_length(Gate, "position"), default=""
        )
        if position:
            numbers = point_numbers(position)
            if numbers is None or len(numbers) != 2:
                check.error(
                    m.key_lines["position"], f"{field}.position", f"must be x,y, got {position!r}"
                )
        turnstiles = _turnstiles(check, m, f"{field}.turnstiles", code or "")
        serves = block_list(check, m, f"{field}.serves", block_rows)
        if code is not None and name is not None and names is not None and position is not None:
            gates.append(
                GateSpec(
                    code=code,
                    name=name,
                    names=names,
                    position=position,
                    turnstiles=turnstiles,
                    serves=serves,
                )
            )
    return gates


def _turnstiles(check: VenueCheck, m: Mapping, field: str, gate_code: str) -> list[str]:
    if "turnstiles" not in m:
        return []
    value, line = m["turnstiles"], m.key_lines["turnstiles"]
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            check.error(line, field, f"must be at least 0, got {value}")
            return []
        return [f"{gate_code}{number:02d}" for number in range(1, value + 1)]
    if not isinstance(value, Sequence):
        check.error(line, field, f"must be a count or a list of codes, got {value!r}")
        return []
    codes: list[str] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(value):
        item_field, item_line = f"{field}[{index}]", value.item_lines[index]
        code = check.label(item, item_line, item_field, max_length=max_length(Turnstile, "code"))
        if code is not None:
            check.unique(seen, code, item_line, item_field, "turnstile")
            codes.append(code)
    return codes


def read_concourses(
    check: VenueCheck, items: list[tuple[str, Any, int]], block_rows: dict[str, list[str]]
) -> list[ConcourseSpec]:
    concourses: list[ConcourseSpec] = []
    seen: dict[str, int] = {}
    for field, value, line in items:
        m = check.mapping(value, line, field, ("code", "name", "names", "serves"))
        if m is None:
            continue
        code = check.text(m, "code", f"{field}.code", max_length=max_length(Concourse, "code"))
        if code is not None:
            check.unique(seen, code, m.key_lines["code"], f"{field}.code", "concourse")
        name = check.text(m, "name", f"{field}.name", max_length=max_length(Concourse, "name"))
        names = check.names(m, "names", f"{field}.names", max_length=max_length(Concourse, "name"))
        serves = block_list(check, m, f"{field}.serves", block_rows)
        if code is not None and name is not None and names is not None:
            concourses.append(ConcourseSpec(code=code, name=name, names=names, serves=serves))
    return concourses


EXIT_KINDS = tuple(Exit.Kind.values)


def read_exits(
    check: VenueCheck, items: list[tuple[str, Any, int]], block_rows: dict[str, list[str]]
) -> list[ExitSpec]:
    exits: list[ExitSpec] = []
    seen: dict[str, int] = {}
    for field, value, line in items:
        m = check.mapping(
            value, line, field, ("code", "name", "width", "kind", "emergency", "serves")
        )
        if m is None:
            continue
        code = check.text(m, "code", f"{field}.code", max_length=max_length(Exit, "code"))
        if code is not None:
            check.unique(seen, code, m.key_lines["code"], f"{field}.code", "exit")
        name = check.text(
            m, "name", f"{field}.name", max_length=max_length(Exit, "name"), default=code or ""
        )
        width = check.number(m, "width", f"{field}.width", low=0.5, high=50)
        kind = check.text(m, "kind", f"{field}.kind", max_length=10)
        if kind is not None and kind not in EXIT_KINDS:
            check.error(
                m.key_lines["kind"], f"{field}.kind", f"must be level or stairs, got '{kind}'"
            )
            kind = None
        emergency = m.get("emergency", False)
        if not isinstance(emergency, bool):
            check.error(
                m.key_lines["emergency"],
                f"{field}.emergency",
                f"must be true or false, got {emergency!r}",
            )
        serves = block_list(check, m, f"{field}.serves", block_rows)
        if "serves" in m and not serves:
            check.error(
                m.key_lines["serves"], f"{field}.serves", "an exit serves at least one block"
            )
        if None not in (code, name, width, kind) and serves:
            exits.append(
                ExitSpec(
                    code=code,  # type: ignore[arg-type]
                    name=name,  # type: ignore[arg-type]
                    width=width,  # type: ignore[arg-type]
                    kind=kind,  # type: ignore[arg-type]
                    emergency_only=bool(emergency),
                    serves=serves,
                )
            )
    return exits
