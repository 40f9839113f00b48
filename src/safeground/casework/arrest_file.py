"""Read the police's arrest return for one match (CSV) and check all of it before anything is
written, as the ticket import does (entry/ticket_file.py).

One line per arrest, with a header line naming the columns (any order, any case; columns not
listed here are ignored):

    offence_group   the Home Office offence group: its code (`pitch_incursion`) or its name
                    (`Pitch incursion`) (also: offence, group, home_office_offence)
    club            the arrested person's club: home, away, other or not_known (empty:
                    not_known), spelt as the API spells it
    reference       the police's custody or crime reference (required; unique in the file)
    time            optional: when the arrest was made, `2016-10-26 21:05` or `26/10/2016 21:05`
                    (UK time) or ISO 8601 with its offset (also: arrested_at)

Every problem is collected, not just the first, as `line N: FIELD: what is wrong`.
"""

from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone, translation
from django.utils.translation import gettext as _

from safeground.csv_file import Row, decoded, header_read, line_name, lines
from safeground.errors import FileRefused, too_long

from .models import Outcome

ALIASES = {
    "offence_group": "offence_group",
    "offence": "offence_group",
    "group": "offence_group",
    "home_office_offence": "offence_group",
    "home_office_group": "offence_group",
    "club": "club",
    "reference": "reference",
    "police_reference": "reference",
    "custody_reference": "reference",
    "crime_reference": "reference",
    "ref": "reference",
    "time": "time",
    "arrested_at": "time",
}
with translation.override(None):  # the police's files name the groups in English
    GROUPS = {
        **{code: code for code in Outcome.HomeOfficeOffence.values},
        **{label.lower(): code for code, label in Outcome.HomeOfficeOffence.choices},
    }
CLUBS = {
    "home": Outcome.Club.HOME,
    "away": Outcome.Club.AWAY,
    "other": Outcome.Club.OTHER,
    "not known": Outcome.Club.NOT_KNOWN,
    "not_known": Outcome.Club.NOT_KNOWN,
    "unknown": Outcome.Club.NOT_KNOWN,
    "": Outcome.Club.NOT_KNOWN,
}
TIMES = ("%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M", "%d/%m/%Y %H:%M")
MAX_REFERENCE = 100
MAX_LINES = 2000


class ArrestsRefused(FileRefused):
    """The arrests are refused whole; `errors` lists every problem (`line N: field: message`,
    or `arrests[N].field: message` from the API); nothing was written."""

    code = "arrests_refused"


class ArrestsConflict(ArrestsRefused):
    """Arrests well formed but refused by the state of things (409)."""

    status = 409


@dataclass(frozen=True)
class ArrestRow:
    where: str  # "line 3" in a file, "arrests[2]" in the API's body
    offence_group: str
    club: str
    reference: str
    time: datetime | None


def _time(value: str) -> datetime | None:
    """A time as written, or None if it cannot be read; without an offset it is UK time."""
    for form in TIMES:
        try:
            return timezone.make_aware(datetime.strptime(value, form))  # noqa: DTZ007 (UK time)
        except ValueError:
            continue
    try:
        found = datetime.fromisoformat(value)
    except ValueError:
        return None
    return found if found.tzinfo else timezone.make_aware(found)


def parse_arrests(data: bytes) -> list[ArrestRow]:
    """Every arrest of the file, or ArrestsRefused with every problem found."""
    text, errors = decoded(data)
    if errors:
        raise ArrestsRefused(errors)
    if not text.strip():
        raise ArrestsRefused([f"{line_name(1)}: file: " + _("is empty (no header, no arrests)")])
    header = header_read(text, ALIASES, ("offence_group", "club", "reference"))
    if header.errors:
        raise ArrestsRefused(header.errors)
    rows: list[ArrestRow] = []
    for start, fields in lines(header, errors):
        if len(rows) >= MAX_LINES:
            said = _("more than %(most)s arrests in one file") % {"most": MAX_LINES}
            errors.append(f"{line_name(start)}: file: {said}")
            break
        row = _row(Row(fields, line_name(start), header, errors))
        if row is not None:
            rows.append(row)
    if errors:
        raise ArrestsRefused(errors)
    if not rows:
        raise ArrestsRefused([f"{line_name(2)}: file: " + _("has a header but no arrests")])
    return rows


def _row(fields: Row) -> ArrestRow | None:
    if not fields.complete():
        return None
    before = len(fields.errors)
    get, bad = fields.get, fields.bad

    group = GROUPS.get(" ".join(get("offence_group").lower().split()), "")
    if not group:
        names = ", ".join(Outcome.HomeOfficeOffence.values)
        said = _("'%(value)s' is not a Home Office group (%(groups)s)")
        bad("offence_group", said % {"value": get("offence_group")[:60], "groups": names})
    club = CLUBS.get(" ".join(get("club").lower().split()))
    if club is None:
        said = _("'%(value)s' must be home, away, other or not_known")
        bad("club", said % {"value": get("club")[:60]})
    reference = get("reference")
    if not reference:
        bad("reference", _("is missing"))
    elif len(reference) > MAX_REFERENCE:
        bad("reference", too_long(len(reference), MAX_REFERENCE))
    time = None
    if get("time"):
        time = _time(get("time"))
        if time is None:
            said = _("'%(value)s' is not a time like 2016-10-26 21:05")
            bad("time", said % {"value": get("time")[:40]})
    if len(fields.errors) > before or club is None:
        return None
    return ArrestRow(fields.where, group, club, reference, time)
