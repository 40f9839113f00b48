"""Read the police's arrest return for one match (CSV) and check all of it before anything is
written, as the ticket import does (entry/ticket_file.py).

One line per arrest, with a header line naming the columns (any order, any case; columns not
listed here are ignored):

    offence_group   the Home Office offence group: its code (`pitch_incursion`) or its name
                    (`Pitch incursion`) (also: offence, group, home_office_offence)
    club            the arrested person's club: home, away, other or not known (empty: not known)
    reference       the police's custody or crime reference (required; unique in the file)
    time            optional: when the arrest was made, `2016-10-26 21:05` or `26/10/2016 21:05`
                    (UK time) or ISO 8601 with its offset (also: arrested_at)

Every problem is collected, not just the first, as `line N: FIELD: what is wrong`.
"""

import csv
import io
import re
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from safeground.errors import FileRefused

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

    def __init__(self, errors: list[str], *, status: int | None = None) -> None:
        super().__init__(errors)
        if status is not None:
            self.status = status


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
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise ArrestsRefused(
            [f"line {line}: file: is not UTF-8 text; export it as UTF-8 CSV"]
        ) from None
    if not text.strip():
        raise ArrestsRefused(["line 1: file: is empty (no header, no arrests)"])
    first = text.split("\n", 1)[0]
    delimiter = max((",", ";", "\t"), key=first.count)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    errors: list[str] = []
    try:
        header = next(reader)
    except csv.Error as error:
        raise ArrestsRefused([f"line 1: header: {error}"]) from None
    columns: dict[str, int] = {}
    for position, raw in enumerate(header):
        name = ALIASES.get(re.sub(r"[\s\-]+", "_", raw.strip().lower()))
        if name is None:
            continue
        if name in columns:
            errors.append(f"line 1: header: column '{name}' appears twice")
        columns[name] = position
    found = ", ".join(h.strip() for h in header) or "nothing"
    for required in ("offence_group", "club", "reference"):
        if required not in columns:
            errors.append(f"line 1: header: no '{required}' column (found: {found})")
    if errors:
        raise ArrestsRefused(errors)
    rows: list[ArrestRow] = []
    line = reader.line_num + 1
    try:
        for fields in reader:
            start, line = line, reader.line_num + 1
            if not any(field.strip() for field in fields):
                continue
            if len(rows) >= MAX_LINES:
                errors.append(f"line {start}: file: more than {MAX_LINES} arrests in one file")
                break
            row = _row(fields, f"line {start}", len(header), columns, errors)
            if row is not None:
                rows.append(row)
    except csv.Error as error:
        errors.append(f"line {reader.line_num}: file: {error}")
    if errors:
        raise ArrestsRefused(errors)
    if not rows:
        raise ArrestsRefused(["line 2: file: has a header but no arrests"])
    return rows


def _row(
    fields: list[str], where: str, width: int, columns: dict[str, int], errors: list[str]
) -> ArrestRow | None:
    if len(fields) != width:
        errors.append(f"{where}: row: has {len(fields)} fields; the header has {width}")
        return None
    before = len(errors)

    def get(name: str) -> str:
        position = columns.get(name)
        return fields[position].strip() if position is not None else ""

    def bad(field: str, message: str) -> None:
        errors.append(f"{where}: {field}: {message}")

    group = GROUPS.get(" ".join(get("offence_group").lower().split()), "")
    if not group:
        names = ", ".join(Outcome.HomeOfficeOffence.values)
        bad("offence_group", f"'{get('offence_group')[:60]}' is not a Home Office group ({names})")
    club = CLUBS.get(" ".join(get("club").lower().split()))
    if club is None:
        bad("club", f"'{get('club')[:60]}' must be home, away, other or not known")
    reference = get("reference")
    if not reference:
        bad("reference", "is missing")
    elif len(reference) > MAX_REFERENCE:
        bad("reference", f"is {len(reference)} characters; at most {MAX_REFERENCE}")
    time = None
    if get("time"):
        time = _time(get("time"))
        if time is None:
            bad("time", f"'{get('time')[:40]}' is not a time like 2016-10-26 21:05")
    if len(errors) > before or club is None:
        return None
    return ArrestRow(where, group, club, reference, time)
