"""A season's fixtures from a CSV file, checked whole before anything is written.

A header line names the columns (any order, any case): opponent, competition, stage, kickoff,
layout, away_allocation, shared_with (matches/fixture_fields.py says what each holds; stage,
away_allocation and shared_with may be left out). Every problem is collected as
`line N: COLUMN: what is wrong`, so the file can be fixed in one pass.
"""

import csv
import io

from django.utils.translation import gettext as _

from safeground.csv_file import line_name
from safeground.errors import FileRefused
from safeground.venues.models import Ground

from .fixture_fields import FIELDS, FixtureFields, fixture_fields_check

REQUIRED = ("opponent", "competition", "kickoff", "layout")


class SeasonFileError(FileRefused):
    """The season file is refused; `errors` lists every problem as `line N: column: message`."""

    code = "season_file_refused"


def season_file_parse(*, ground: Ground, data: bytes) -> list[FixtureFields]:
    """Every fixture of the file, or SeasonFileError with every problem found."""
    try:
        text = data.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise SeasonFileError([f"{line_name(line)}: file: " + _("is not UTF-8 text")]) from None
    reader = csv.reader(io.StringIO(text, newline=""))
    header = [name.strip().lower().replace(" ", "_") for name in next(reader, [])]
    first = line_name(1)
    errors = [
        f"{first}: header: " + _("no '%(name)s' column") % {"name": name}
        for name in REQUIRED
        if name not in header
    ]
    errors += [
        f"{first}: header: "
        + _("unknown column '%(name)s' (expected %(columns)s)")
        % {"name": name, "columns": ", ".join(FIELDS)}
        for name in header
        if name and name not in FIELDS
    ]
    if errors:
        raise SeasonFileError(errors)
    fixtures: list[FixtureFields] = []
    line = reader.line_num + 1
    for row in reader:
        start, line = line, reader.line_num + 1
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            said = _("has %(fields)s fields; the header has %(width)s")
            errors.append(
                f"{line_name(start)}: row: {said % {'fields': len(row), 'width': len(header)}}"
            )
            continue
        fields, problems = fixture_fields_check(
            ground=ground, data=dict(zip(header, row, strict=True))
        )
        errors += [f"{line_name(start)}: {column}: {message}" for column, message in problems]
        if fields is not None:
            fixtures.append(fields)
    if errors:
        raise SeasonFileError(errors)
    if not fixtures:
        raise SeasonFileError([f"{line_name(2)}: file: " + _("has a header but no fixtures")])
    return fixtures
