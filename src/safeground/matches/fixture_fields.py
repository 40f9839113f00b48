"""A fixture as a club types it (the page, `safeground add-fixture`, a season CSV, the API),
checked into what fixture_add and fixture_edit write.

The fields, by these names everywhere (the CSV's columns, the command's options, the API's keys):

    opponent         the visiting club, by name (a club new to Safeground is added)
    competition      e.g. Premier League (added if new)
    stage            e.g. Fourth round (optional)
    kickoff          local time at the ground, 2026-12-05 15:00 (or ISO 8601 with an offset)
    layout           the code of one of the ground's layouts (its venue file's `layouts:`)
    away_allocation  tickets for the away end, a whole number (0 if left out)
    shared_with      organisations working the match, by slug or name, separated by ; or |
                     (a police force works it as the police; the opponent's own organisation
                     as the away club)

Every problem is collected as (field, message), so a page shows each at its field and a file
names each row and column.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from safeground.accounts.models import Organisation
from safeground.errors import SafegroundError, too_long
from safeground.venues.capacity import zone_capacities
from safeground.venues.models import Ground, Layout, LayoutZone

from .models import Club, FixtureShare

FIELDS = (
    "opponent", "competition", "stage", "kickoff", "layout", "away_allocation", "shared_with",
)  # fmt: skip
NAME_LENGTH = 100
# The most the database's column holds (PositiveIntegerField), far past any ground's capacity.
ALLOCATION_MAX = 2**31 - 1
KICKOFF_FORMATS = ("%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M", "%d/%m/%Y %H:%M")
# A kick-off's year: the oldest match a club records to the furthest it plans; a year outside is
# a typing mistake (and 9999 with an offset would overflow the database's time).
KICKOFF_YEARS = range(1900, 2200)


def _kickoff_pattern() -> str:
    """The forms `_kickoff` reads, as a pattern of days the calendar has (no 31 November; 29
    February in leap years only) in KICKOFF_YEARS, so that the API's schema calls valid exactly
    the kick-offs the service accepts."""
    year = r"(19|20|21)[0-9]{2}"
    leap = r"((19|20|21)(0[48]|[2468][048]|[13579][26])|2000)"
    month_day = (
        r"(0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])"
        r"|(0[469]|11)-(0[1-9]|[12][0-9]|30)"
        r"|02-(0[1-9]|1[0-9]|2[0-8])"
    )
    day_month = (
        r"(0[1-9]|[12][0-9]|3[01])/(0[13578]|1[02])"
        r"|(0[1-9]|[12][0-9]|30)/(0[469]|11)"
        r"|(0[1-9]|1[0-9]|2[0-8])/02"
    )
    clock = r"([01][0-9]|2[0-3]):[0-5][0-9]"
    iso = (
        rf"({year}-({month_day})|{leap}-02-29)[T ]{clock}"
        rf"(:[0-5][0-9](\.[0-9]{{1,6}})?)?(Z|[+-]{clock})?"
    )
    return rf"^({iso}|(({day_month})/{year}|29/02/{leap}) {clock})$"


KICKOFF_PATTERN = _kickoff_pattern()


class FixtureError(SafegroundError):
    """A fixture that cannot be made as asked; `field` names what is wrong."""

    code = "fixture_refused"


class FixtureNotFound(FixtureError):
    """What it names is not there (or not one you may see) (404)."""

    status = 404


class FixtureConflict(FixtureError):
    """Well formed, but refused by the state of things (409)."""

    status = 409


class NotThere(str):
    """A problem's words that name something not there (an organisation, a layout): the API
    answers it 404 (FixtureNotFound); a page shows it as any other."""


# What the API's schema cannot check, as the fields hold to it: how they fit the ground and the
# clubs (the away zone's capacity, the ground's layouts, the home club): the state of things.
FITTING = frozenset({"away_allocation", "layout", "shared_with", "organisation"})


def fixture_refusal(field: str, message: str) -> FixtureError:
    """A problem as the refusal the API answers: 404, 409 or 400 (ADR 0021)."""
    if isinstance(message, NotThere):
        return FixtureNotFound(field, message)
    if field in FITTING:
        return FixtureConflict(field, message)
    return FixtureError(field, message)


@dataclass(frozen=True)
class FixtureFields:
    opponent: str
    competition: str
    stage: str
    kickoff: datetime
    layout: Layout | None  # None: an edit keeps the zones of a fixture set zone by zone
    away_allocation: int
    shares: dict[Organisation, str]


def fixture_fields_read(
    *, ground: Ground, data: Mapping[str, Any], keep_zones: bool = False
) -> FixtureFields:
    """The checked fields, or FixtureError naming the first problem."""
    fields, problems = fixture_fields_check(ground=ground, data=data, keep_zones=keep_zones)
    if fields is None:
        raise fixture_refusal(*problems[0])
    return fields


def fixture_fields_check(
    *, ground: Ground, data: Mapping[str, Any], keep_zones: bool = False
) -> tuple[FixtureFields | None, list[tuple[str, str]]]:
    """(the fields, []) or (None, every (field, message) found). keep_zones: no layout is needed
    (editing a fixture whose zones were set one by one, as the demo's 2016 season's were)."""
    problems: list[tuple[str, str]] = []

    def text(name: str, *, required: bool) -> str:
        value = " ".join(str(data.get(name) or "").split())
        if required and not value:
            problems.append((name, _("is missing")))
        elif len(value) > NAME_LENGTH:
            problems.append((name, too_long(len(value), NAME_LENGTH)))
        return value

    opponent = text("opponent", required=True)
    if opponent and opponent.casefold() == ground.organisation.name.casefold():
        problems.append(("opponent", _("a club cannot play itself")))
    competition = text("competition", required=True)
    stage = text("stage", required=False)
    kickoff = _kickoff(data.get("kickoff"), problems)
    layout_code = str(data.get("layout") or "").strip()
    layout = None if keep_zones and not layout_code else _layout(ground, layout_code, problems)
    allocation = _allocation(data.get("away_allocation"), problems)
    if layout is not None and allocation > 0:
        _allocation_fits(layout, allocation, problems)
    shares = shares_check(ground, opponent, data.get("shared_with"), problems)
    if problems or kickoff is None or (layout is None and not keep_zones):
        return None, problems
    return FixtureFields(
        opponent=opponent,
        competition=competition,
        stage=stage,
        kickoff=kickoff,
        layout=layout,
        away_allocation=allocation,
        shares=shares,
    ), []


def _kickoff(value: Any, problems: list[tuple[str, str]]) -> datetime | None:
    if isinstance(value, datetime):
        found = value
    else:
        raw = str(value or "").strip()
        if not raw:
            problems.append(("kickoff", _("is missing")))
            return None
        for pattern in KICKOFF_FORMATS:
            try:
                # The ground's local time (TIME_ZONE).
                found = datetime.strptime(raw, pattern).replace(
                    tzinfo=timezone.get_current_timezone()
                )
                break
            except ValueError:
                continue
        else:
            try:
                found = datetime.fromisoformat(raw)
            except ValueError:
                said = _("'%(value)s' is not a date and time (use 2026-12-05 15:00)")
                problems.append(("kickoff", said % {"value": raw}))
                return None
    if found.year not in KICKOFF_YEARS:
        said = _("'%(value)s' is not a year of football (%(first)s to %(last)s)")
        values = {"value": found.year, "first": KICKOFF_YEARS[0], "last": KICKOFF_YEARS[-1]}
        problems.append(("kickoff", said % values))
        return None
    if timezone.is_naive(found):
        found = timezone.make_aware(found)
    # Any offset ISO 8601 allows (to ±23:59) is read, but PostgreSQL stores none past ±15:59:
    # the moment goes to the database in UTC.
    return found.astimezone(UTC)


def _layout(ground: Ground, code: str, problems: list[tuple[str, str]]) -> Layout | None:
    layouts = {layout.code: layout for layout in ground.layouts.all()}
    if not layouts:
        said = _("%(ground)s has no layouts: add `layouts:` to its venue file")
        problems.append(("layout", said % {"ground": ground.name}))
        return None
    if not code:
        said = _("is missing; one of %(layouts)s") % {"layouts": ", ".join(sorted(layouts))}
        problems.append(("layout", said))
        return None
    if code not in layouts:
        said = _("no layout '%(code)s' at %(ground)s; one of %(layouts)s")
        slots = {"code": code, "ground": ground.name, "layouts": ", ".join(sorted(layouts))}
        problems.append(("layout", NotThere(said % slots)))
        return None
    return layouts[code]


def _allocation(value: Any, problems: list[tuple[str, str]]) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    else:
        raw = str(value or "").strip().replace(",", "")
        if not raw:
            return 0
        if not raw.isdigit():
            said = _("'%(value)s' is not a whole number") % {"value": value}
            problems.append(("away_allocation", said))
            return 0
        number = int(raw)
    if number < 0:
        said = _("must be at least 0, got %(number)s") % {"number": number}
        problems.append(("away_allocation", said))
    elif number > ALLOCATION_MAX:
        # A fixture whose zones were set one by one has no layout to check the number against.
        said = _("must be at most %(most)s, got %(number)s")
        problems.append(("away_allocation", said % {"most": ALLOCATION_MAX, "number": number}))
    return number


def _allocation_fits(layout: Layout, allocation: int, problems: list[tuple[str, str]]) -> None:
    """The away allocation must fit the layout's away zones at their Green Guide safe capacity:
    more tickets than that is a crowd the ground cannot hold or clear safely."""
    away = {
        choice.zone_id: choice.zone.local_name
        for choice in layout.zones.select_related("zone").filter(use=LayoutZone.Use.AWAY)
    }
    if not away:
        said = _("the layout '%(layout)s' has no away zone to hold %(allocation)s")
        problems.append(
            ("away_allocation", said % {"layout": layout.code, "allocation": allocation})
        )
        return
    safe = sum(c.safe for c in zone_capacities(layout.ground, away).values())
    if allocation > safe:
        said = _(
            "%(allocation)s is more than the safe capacity of the away zone (%(zones)s: %(safe)s)"
        )
        slots = {"allocation": allocation, "zones": ", ".join(sorted(away.values())), "safe": safe}
        problems.append(("away_allocation", said % slots))


def shares_check(
    ground: Ground, opponent: str, value: Any, problems: list[tuple[str, str]]
) -> dict[Organisation, str]:
    """Organisations by slug or name, each with the purpose it works the match for."""
    if isinstance(value, str):
        wanted = [part.strip() for part in re.split(r"[;|]", value)]
    else:
        wanted = [str(part).strip() for part in value or ()]
    wanted = [part for part in wanted if part]
    if not wanted:
        return {}
    found = {
        key: organisation
        for organisation in Organisation.objects.filter(Q(slug__in=wanted) | Q(name__in=wanted))
        for key in (organisation.slug, organisation.name)
    }
    away_org = Club.objects.filter(name=opponent).values_list("organisation_id", flat=True).first()
    shares: dict[Organisation, str] = {}
    for name in wanted:
        organisation = found.get(name)
        if organisation is None:
            said = _("no organisation '%(slug)s'") % {"slug": name}
            problems.append(("shared_with", NotThere(said)))
        elif organisation.pk == ground.organisation_id:
            said = _("%(organisation)s is the home club") % {"organisation": organisation.name}
            problems.append(("shared_with", said))
        elif organisation.kind == Organisation.Kind.POLICE_FORCE:
            shares[organisation] = FixtureShare.Purpose.POLICE
        elif organisation.pk == away_org:
            shares[organisation] = FixtureShare.Purpose.AWAY_CLUB
        else:
            shares[organisation] = FixtureShare.Purpose.OTHER
    return shares
