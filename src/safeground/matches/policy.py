"""The risk policy: a YAML file the safety officer reads and edits (shipped: policy/default.yaml).

It holds the category labels and their thresholds, each factor's weight and the tables behind
them (rivalries, competitions, stages). A file with a mistake is refused whole, every problem
named as `FILE:LINE: KEY: message` (read and checked by safeground/yaml_file.py, as venue files
and checklists are), because a wrong
weight silently lowers a match's category. The file's SHA-256 is stored with each assessment, so
a category always says which policy gave it.
"""

import hashlib
import re
from dataclasses import dataclass, field
from datetime import time
from pathlib import Path
from typing import Any

from django.conf import settings

from safeground.errors import FileRefused
from safeground.yaml_file import Check, Mapping, Sequence, yaml_load, yaml_text

# The factors a policy must weigh, in the order the page lists them.
FACTORS = (
    "ground_incidents",
    "club_history",
    "arrests_ejections",
    "banned_denials",
    "rivalry",
    "competition",
    "kickoff",
    "away_allocation",
)


# What every category's plan sets, in the order the plan lists them.
MEASURES = (
    ("alcohol", "Alcohol restrictions"),
    ("police_inside", "Police inside the ground"),
    ("search", "Search regime"),
    ("banned_checks", "Banned-supporter checks at the gates"),
    ("segregation_buffer", "Segregation buffer"),
    ("away_arrival", "Away supporters' arrival"),
    ("away_holding", "Away supporters held after the match"),
)
ZONE_USES = ("home", "away", "buffer")
MEANING_LENGTH = 100  # a category's meaning, as RiskAssessment.meaning keeps it


class PolicyFileError(FileRefused):
    """The policy file is refused; `errors` lists every problem as `file:line: key: message`."""

    code = "risk_policy_refused"


@dataclass(frozen=True)
class CategoryLevel:
    label: str
    start: float  # the score from which a fixture takes this category
    meaning: str
    meanings: dict[str, str] = field(default_factory=dict)  # in other languages: {cy: "..."}


@dataclass(frozen=True)
class Rivalry:
    clubs: frozenset[str]
    name: str
    level: float


@dataclass(frozen=True)
class Policy:
    path: str
    sha256: str
    categories: tuple[CategoryLevel, ...]  # lowest first
    season_starts: tuple[int, int]  # (month, day)
    half_life_days: float
    weights: dict[str, float]
    ground_categories: dict[str, float]
    club_categories: dict[str, float]
    club_years: int
    arrest_categories: dict[str, float]
    arrest_days: int
    denial_days: int
    rivalries: tuple[Rivalry, ...]
    competitions: dict[str, float]
    stages: dict[str, float]
    evening_from: time
    away_free_up_to: int
    away_per: int
    first_aid: "FirstAidPolicy"
    plans: dict[str, "PlanPolicy"]  # category label -> the plan it starts from
    gates: "GatePolicy"

    def category_for(self, score: float) -> CategoryLevel:
        reached = [level for level in self.categories if score >= level.start]
        return reached[-1]

    def next_category(self, score: float) -> CategoryLevel | None:
        above = [level for level in self.categories if level.start > score]
        return above[0] if above else None


@dataclass(frozen=True)
class FirstAidPolicy:
    """One first aider per `per` spectators up to `up_to`, then one per `then_per`; a crowd
    doctor above `doctor_over` (the Green Guide's planning figures by default)."""

    per: int
    up_to: int
    then_per: int
    doctor_over: int


@dataclass(frozen=True)
class PlanPolicy:
    spectators_per_steward: dict[str, int]  # zone use -> spectators per steward
    measures: dict[str, str]
    primary: str
    fallback: str


@dataclass(frozen=True)
class GatePolicy:
    """When a gate under pressure is warned of (entry.gate_pressure; docs/adr/0025): each
    figure's meaning is the policy file's comment. `jump_reasons` are groups of scan reasons (the
    reason table's codes, entry.rules) whose denials are counted together."""

    window_seconds: int = 60
    baseline_minutes: int = 10
    jump_factor: float = 3.0
    jump_at_least: int = 10
    jump_reasons: tuple[tuple[str, ...], ...] = (("forged", "unknown_ticket"), ("already_inside",))
    capacity_minutes: int = 3
    silent_seconds: int = 120
    busy_per_minute: float = 5.0


# The scan reasons a gate policy may name: the gates register their reason table here
# (entry.apps), as matches may not import entry.
scan_reasons: set[str] = set()


def policy_path() -> Path:
    return Path(settings.SAFEGROUND_RISK_POLICY)


_cache: dict[str, tuple[float, Policy]] = {}


def policy_current() -> Policy:
    """The policy at SAFEGROUND_RISK_POLICY, read again whenever the file changes."""
    path = policy_path()
    try:
        mtime = path.stat().st_mtime
    except OSError as error:
        raise PolicyFileError([f"{path}: cannot read the file: {error}"]) from error
    cached = _cache.get(str(path))
    if cached is None or cached[0] != mtime:
        cached = (mtime, policy_read(path=path))
        _cache[str(path)] = cached
    return cached[1]


def policy_read(*, path: Path) -> Policy:
    text = yaml_text(path=path, refused=PolicyFileError, what="a risk policy")
    return policy_parse(text=text, filename=str(path))


def policy_parse(*, text: str, filename: str) -> Policy:
    document = yaml_load(
        text=text, filename=filename, refused=PolicyFileError, what="a risk policy"
    )
    check = _Check(filename)
    policy = _policy(check, document, filename, hashlib.sha256(text.encode()).hexdigest())
    if check.errors or policy is None:
        raise PolicyFileError(check.errors)
    return policy


class _Check(Check):
    """The shared check, with the policy's two kinds of value: a number that is not negative
    (a weight, a threshold) and a table of names to such numbers."""

    def amount(self, value: Any, line: int, key: str, *, whole: bool = False) -> float | None:
        number = self.number_value(value, line, key, whole=whole)
        if number is not None and number < 0:
            self.error(line, key, f"must not be negative, got {number}")
            return None
        return None if number is None else float(number)

    def weights(self, value: Any, line: int, key: str) -> dict[str, float]:
        """A mapping of names to numbers (category codes, competitions, stages)."""
        m = self.mapping(value, line, key)
        if m is None:
            return {}
        found = {}
        for name, item in m.items():
            number = self.amount(item, m.key_lines[name], f"{key}.{name}")
            if number is not None:
                found[str(name)] = number
        return found


def _section(
    check: _Check, top: Mapping, name: str, allowed: tuple[str, ...] | None = None
) -> Mapping | None:
    got = check.get(top, name, "")
    return None if got is None else check.mapping(got[0], got[1], name, allowed)


def _policy(check: _Check, document: Any, filename: str, sha256: str) -> Policy | None:
    sections = (
        "categories",
        "season_starts",
        "recency_half_life_days",
        "factors",
        "rivalries",
        "competitions",
        "stages",
        "kickoff",
        "away_allocation",
        "first_aid",
        "plans",
        "gates",
    )
    top = check.mapping(document, 1, "", sections)
    if top is None:
        return None
    categories = _categories(check, top)
    season_starts = _season_starts(check, top)
    half_life = _half_life(check, top)
    weights, tables = _factors(check, top)
    rivalries = _rivalries(check, top)
    competitions = stages = {}
    if (got := check.get(top, "competitions", "")) is not None:
        competitions = check.weights(*got, "competitions")
    if (got := check.get(top, "stages", "")) is not None:
        stages = {name.lower(): value for name, value in check.weights(*got, "stages").items()}
    evening_from = None
    if (kickoff := _section(check, top, "kickoff", ("evening_from",))) is not None:
        evening_from = _clock(check, kickoff, "evening_from", "kickoff.evening_from")
    away = _away_allocation(check, top)
    first_aid = _first_aid(check, top)
    plans = _plans(check, top, categories or ())
    gates = _gates(check, top["gates"], top.key_lines["gates"]) if "gates" in top else GatePolicy()
    if (
        check.errors
        or first_aid is None
        or categories is None
        or season_starts is None
        or half_life is None
        or evening_from is None
    ):
        return None
    return Policy(
        path=filename,
        sha256=sha256,
        categories=categories,
        season_starts=season_starts,
        half_life_days=half_life,
        weights=weights,
        ground_categories=tables["ground_incidents"]["categories"],
        club_categories=tables["club_history"]["categories"],
        club_years=tables["club_history"]["years"],
        arrest_categories=tables["arrests_ejections"]["categories"],
        arrest_days=tables["arrests_ejections"]["days"],
        denial_days=tables["banned_denials"]["days"],
        rivalries=rivalries,
        competitions=competitions,
        stages=stages,
        evening_from=evening_from,
        away_free_up_to=away["free_up_to"],
        away_per=away["per"],
        first_aid=first_aid,
        plans=plans,
        gates=gates or GatePolicy(),
    )


_GATE_NUMBERS = ("window_seconds", "baseline_minutes", "capacity_minutes", "silent_seconds")


def _gates(check: _Check, value: Any, line: int) -> GatePolicy | None:
    names = (*_GATE_NUMBERS, "busy_per_minute", "jump")
    m = check.mapping(value, line, "gates", names)
    if m is None:
        return None
    default = GatePolicy()
    whole = {
        name: check.whole_number(
            m, name, f"gates.{name}", minimum=1, default=getattr(default, name)
        )
        for name in _GATE_NUMBERS
    }
    busy = check.number(
        m, "busy_per_minute", "gates.busy_per_minute", low=0, default=default.busy_per_minute
    )
    factor, at_least, reasons = default.jump_factor, default.jump_at_least, default.jump_reasons
    if "jump" in m:
        jump = check.mapping(
            m["jump"], m.key_lines["jump"], "gates.jump", ("factor", "at_least", "reasons")
        )
        if jump is None:
            return None
        factor = check.number(jump, "factor", "gates.jump.factor", low=1, default=factor)  # type: ignore[assignment]
        at_least = check.whole_number(
            jump, "at_least", "gates.jump.at_least", minimum=1, default=at_least
        )  # type: ignore[assignment]
        if "reasons" in jump:
            reasons = _reason_groups(check, jump)  # type: ignore[assignment]
    if None in (*whole.values(), busy, factor, at_least, reasons):
        return None
    return GatePolicy(
        **whole,  # type: ignore[arg-type]
        busy_per_minute=busy,  # type: ignore[arg-type]
        jump_factor=factor,
        jump_at_least=at_least,
        jump_reasons=reasons,
    )


def _reason_groups(check: _Check, jump: Mapping) -> tuple[tuple[str, ...], ...] | None:
    """Each group a list of the reason table's codes (`[forged, unknown_ticket]`)."""
    groups = []
    for key, group, line in check.items(jump, "reasons", "gates.jump.reasons", required=True):
        if not isinstance(group, list) or not group:
            check.error(line, key, f"must be a list of scan reasons, got {group!r}")
            return None
        for code in group:
            if scan_reasons and code not in scan_reasons:
                check.error(
                    line,
                    key,
                    f"unknown scan reason {code!r}; one of {', '.join(sorted(scan_reasons))}",
                )
                return None
        groups.append(tuple(str(code) for code in group))
    return tuple(groups)


def _half_life(check: _Check, top: Mapping) -> float | None:
    """How many days until an old incident counts half as much as today's."""
    half_life = None
    if (got := check.get(top, "recency_half_life_days", "")) is not None:
        half_life = check.amount(*got, "recency_half_life_days")
        if half_life == 0:
            check.error(got[1], "recency_half_life_days", "must be more than 0")
    return half_life


def _factors(check: _Check, top: Mapping) -> tuple[dict[str, float], dict[str, Any]]:
    """(factor -> its weight in the risk score, factor -> the rest of its table)."""
    factors = _section(check, top, "factors", FACTORS)
    weights: dict[str, float] = {}
    tables: dict[str, Any] = {}
    if factors is not None:
        for factor in FACTORS:
            spec = _factor(check, factors, factor)
            if spec is not None:
                weights[factor] = spec.pop("weight")
                tables[factor] = spec
    return weights, tables


def _away_allocation(check: _Check, top: Mapping) -> dict[str, int]:
    """`free_up_to` and `per`, those given and valid (`per` divides: never 0)."""
    away: dict[str, int] = {}
    if (allocation := _section(check, top, "away_allocation", ("free_up_to", "per"))) is not None:
        for name in ("free_up_to", "per"):
            key = f"away_allocation.{name}"
            if (got := check.get(allocation, name, "away_allocation")) is not None:
                number = check.amount(*got, key, whole=True)
                if number is not None and name == "per" and number == 0:
                    check.error(got[1], key, "must be more than 0")
                elif number is not None:
                    away[name] = int(number)
    return away


def _whole(check: _Check, m: Mapping, name: str, key: str, minimum: int = 0) -> int | None:
    if (got := check.get(m, name, key)) is None:
        return None
    number = check.amount(*got, f"{key}.{name}", whole=True)
    if number is not None and number < minimum:
        check.error(got[1], f"{key}.{name}", f"must be at least {minimum}, got {number:g}")
        return None
    return None if number is None else int(number)


def _first_aid(check: _Check, top: Mapping) -> FirstAidPolicy | None:
    names = ("spectators_per_first_aider", "up_to", "then_per", "crowd_doctor_over")
    if (m := _section(check, top, "first_aid", names)) is None:
        return None
    minimums = {"spectators_per_first_aider": 1, "then_per": 1}
    found = [_whole(check, m, name, "first_aid", minimums.get(name, 0)) for name in names]
    if any(value is None for value in found):
        return None
    per, up_to, then_per, doctor_over = (int(value) for value in found)  # type: ignore[arg-type]
    return FirstAidPolicy(per=per, up_to=up_to, then_per=then_per, doctor_over=doctor_over)


def _plans(
    check: _Check, top: Mapping, categories: tuple[CategoryLevel, ...]
) -> dict[str, PlanPolicy]:
    if (m := _section(check, top, "plans")) is None:
        return {}
    labels = [level.label for level in categories]
    for label in m:
        if str(label) not in labels:
            check.error(m.key_lines[label], f"plans.{label}", "not one of the categories above")
    plans = {}
    for label in labels:
        key = f"plans.{label}"
        if label not in m:
            check.error(m.line, key, "missing: every category needs a plan")
            continue
        plan = check.mapping(
            m[label],
            m.key_lines[label],
            key,
            ("spectators_per_steward", "measures", "communications"),
        )
        if plan is None:
            continue
        ratios: dict[str, int] = {}
        if (got := check.get(plan, "spectators_per_steward", key)) is not None:
            rm = check.mapping(*got, f"{key}.spectators_per_steward", ZONE_USES)
            for use in ZONE_USES if rm is not None else ():
                value = _whole(check, rm, use, f"{key}.spectators_per_steward", minimum=1)  # type: ignore[arg-type]
                if value is not None:
                    ratios[use] = value
        measures: dict[str, str] = {}
        names = tuple(name for name, _ in MEASURES)
        if (got := check.get(plan, "measures", key)) is not None:
            mm = check.mapping(*got, f"{key}.measures", names)
            for name in names if mm is not None else ():
                if (item := check.get(mm, name, f"{key}.measures")) is not None:  # type: ignore[arg-type]
                    text = check.label(*item, f"{key}.measures.{name}")
                    if text is not None:
                        measures[name] = text
        comms: dict[str, str] = {}
        if (got := check.get(plan, "communications", key)) is not None:
            cm = check.mapping(*got, f"{key}.communications", ("primary", "fallback"))
            for name in ("primary", "fallback") if cm is not None else ():
                if (item := check.get(cm, name, f"{key}.communications")) is not None:  # type: ignore[arg-type]
                    text = check.label(*item, f"{key}.communications.{name}")
                    if text is not None:
                        comms[name] = text
        if len(ratios) == len(ZONE_USES) and len(measures) == len(names) and len(comms) == 2:
            plans[label] = PlanPolicy(
                spectators_per_steward=ratios,
                measures=measures,
                primary=comms["primary"],
                fallback=comms["fallback"],
            )
    return plans


# What each factor's section holds besides its weight.
_FACTOR_KEYS: dict[str, tuple[str, ...]] = {
    "ground_incidents": ("categories",),
    "club_history": ("categories", "years"),
    "arrests_ejections": ("categories", "days"),
    "banned_denials": ("days",),
}


def _factor(check: _Check, factors: Mapping, name: str) -> dict[str, Any] | None:
    key = f"factors.{name}"
    extra = _FACTOR_KEYS.get(name, ())
    got = check.get(factors, name, "factors")
    if got is None:
        return None
    m = check.mapping(got[0], got[1], key, ("weight", *extra))
    if m is None:
        return None
    spec: dict[str, Any] = {}
    for part in ("weight", *extra):
        if (value := check.get(m, part, key)) is None:
            continue
        if part == "categories":
            spec[part] = check.weights(*value, f"{key}.categories")
        else:
            number = check.amount(*value, f"{key}.{part}", whole=part != "weight")
            if number is not None:
                spec[part] = number if part == "weight" else int(number)
    return spec if len(spec) == 1 + len(extra) else None


def _categories(check: _Check, top: Mapping) -> tuple[CategoryLevel, ...] | None:
    got = check.get(top, "categories", "")
    if got is None:
        return None
    value, line = got
    if not isinstance(value, Sequence) or not value:
        check.error(line, "categories", f"must be a list of categories, got {value!r}")
        return None
    levels: list[CategoryLevel] = []
    broken = False
    for index, item in enumerate(value):
        key = f"categories[{index}]"
        m = check.mapping(
            item, value.item_lines[index], key, ("label", "from", "meaning", "meanings")
        )
        if m is None:
            continue
        label = start = None
        if (got := check.get(m, "label", key)) is not None:
            label = check.label(*got, f"{key}.label")
        if (got := check.get(m, "from", key)) is not None:
            start = check.amount(*got, f"{key}.from")
            if start is not None and levels and start <= levels[-1].start:
                check.error(got[1], f"{key}.from", "must be above the category before it")
            elif start is not None and not levels and start != 0:
                check.error(got[1], f"{key}.from", "the first category must start from 0")
        meaning: str | None = ""
        if "meaning" in m:
            meaning = check.label(
                m["meaning"], m.key_lines["meaning"], f"{key}.meaning", max_length=MEANING_LENGTH
            )
        meanings = check.names(m, "meanings", f"{key}.meanings", max_length=MEANING_LENGTH)
        if meanings and "meaning" not in m:
            check.error(m.key_lines["meanings"], f"{key}.meanings", "give the English meaning too")
            meanings = None
        if label is not None and start is not None:
            # Kept even with a wrong meaning, so the next category's `from` is checked against it.
            levels.append(
                CategoryLevel(
                    label=label, start=start, meaning=meaning or "", meanings=meanings or {}
                )
            )
        broken = broken or meaning is None or meanings is None
    return tuple(levels) if len(levels) == len(value) and not broken else None


def _season_starts(check: _Check, top: Mapping) -> tuple[int, int] | None:
    got = check.get(top, "season_starts", "")
    if got is None:
        return None
    value, line = got
    found = re.fullmatch(r"(\d\d)-(\d\d)", str(value))
    if not isinstance(value, str) or found is None:
        check.error(line, "season_starts", f'must be "MM-DD" in quotes, got {value!r}')
        return None
    month, day = int(found[1]), int(found[2])
    if not (1 <= month <= 12 and 1 <= day <= 28):
        check.error(line, "season_starts", f"must be a month 01-12 and a day 01-28, got {value}")
        return None
    return month, day


def _clock(check: _Check, m: Mapping, name: str, key: str) -> time | None:
    got = check.get(m, name, key.rsplit(".", 1)[0])
    if got is None:
        return None
    value, line = got
    found = re.fullmatch(r"(\d\d):(\d\d)", str(value)) if isinstance(value, str) else None
    if found is None or int(found[1]) > 23 or int(found[2]) > 59:
        check.error(line, key, f'must be a time "HH:MM" in quotes, got {value!r}')
        return None
    return time(int(found[1]), int(found[2]))


def _rivalries(check: _Check, top: Mapping) -> tuple[Rivalry, ...]:
    got = check.get(top, "rivalries", "")
    if got is None:
        return ()
    value, line = got
    if not isinstance(value, Sequence):
        check.error(line, "rivalries", f"must be a list, got {value!r}")
        return ()
    found: list[Rivalry] = []
    for index, item in enumerate(value):
        key = f"rivalries[{index}]"
        m = check.mapping(item, value.item_lines[index], key, ("clubs", "name", "level"))
        if m is None:
            continue
        clubs = name = level = None
        if (got := check.get(m, "clubs", key)) is not None:
            names = got[0]
            if (
                not isinstance(names, Sequence)
                or len(names) != 2
                or not all(isinstance(n, str) and n.strip() for n in names)
                or names[0] == names[1]
            ):
                check.error(got[1], f"{key}.clubs", f"must name two clubs, got {names!r}")
            else:
                clubs = frozenset(n.strip() for n in names)
        if (got := check.get(m, "name", key)) is not None:
            name = check.label(*got, f"{key}.name")
        if (got := check.get(m, "level", key)) is not None:
            level = check.amount(*got, f"{key}.level")
        if clubs is not None and name is not None and level is not None:
            found.append(Rivalry(clubs=clubs, name=name, level=level))
    return tuple(found)
