"""Reading a CSV file a person exported (the ticket office's tickets, the police's arrests), as
every such reader does: UTF-8 with or without its BOM, the delimiter (comma, semicolon or tab)
from the header line, columns found by name through each file's aliases, blank lines skipped, and
each problem named `line N: field: message` so the whole file can be refused at once with all of
them (errors.FileRefused). The bottom layer, beside yaml_file.py: it imports nothing of the
project.
"""

import csv
import io
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext


def line_name(line: int) -> str:
    """ "line 3", in the reader's language: where each problem of a file is."""
    return gettext("line %(line)s") % {"line": line}


def decoded(data: bytes) -> tuple[str, list[str]]:
    """The file's text, or "" and the problem: not UTF-8 (at which line and byte)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        said = gettext("is not UTF-8 text (byte %(byte)s); export the file as UTF-8 CSV")
        return "", [f"{line_name(line)}: file: {said % {'byte': error.start + 1}}"]


@dataclass
class Header:
    """The header line read: the reader positioned after it, and each known column's position."""

    reader: Any
    width: int
    found: str  # the header as written, for messages
    columns: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def header_read(text: str, aliases: Mapping[str, str], required: Iterable[str]) -> Header:
    """The header's columns by their names (a heading's spaces and dashes read as `_`, then
    `aliases` to the column's name; unknown headings ignored); a column given twice or a required
    one missing is a problem of line 1."""
    first_line = text.split("\n", 1)[0]
    delimiter = max((",", ";", "\t"), key=first_line.count)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        names = next(reader)
    except csv.Error as error:
        return Header(reader, 0, "", errors=[f"{line_name(1)}: header: {error}"])
    found = ", ".join(h.strip() for h in names) or gettext("nothing")
    header = Header(reader, len(names), found)
    for position, raw in enumerate(names):
        name = aliases.get(re.sub(r"[\s\-]+", "_", raw.strip().lower()))
        if name is None:
            continue
        if name in header.columns:
            said = gettext("column '%(name)s' appears twice") % {"name": name}
            header.errors.append(f"{line_name(1)}: header: {said}")
        header.columns[name] = position
    for name in required:
        if name not in header.columns:
            said = gettext("no '%(name)s' column (found: %(found)s)")
            header.errors.append(
                f"{line_name(1)}: header: {said % {'name': name, 'found': header.found}}"
            )
    return header


def lines(header: Header, errors: list[str]) -> Iterator[tuple[int, list[str]]]:
    """Each line after the header that holds something, with the number of the line it starts
    on; a line the csv module cannot read ends the reading with its problem in `errors`."""
    reader = header.reader
    line = reader.line_num + 1
    try:
        for fields in reader:
            start, line = line, reader.line_num + 1
            if any(value.strip() for value in fields):
                yield start, fields
    except csv.Error as error:
        errors.append(f"{line_name(reader.line_num)}: file: {error}")


@dataclass
class Row:
    """One line's fields by column name, and how to name a problem of it (`where`: "line 3")."""

    fields: list[str]
    where: str
    header: Header
    errors: list[str]

    def complete(self) -> bool:
        """As many fields as the header has, or a problem named."""
        if len(self.fields) == self.header.width:
            return True
        said = gettext("has %(fields)s fields; the header has %(width)s") % {
            "fields": len(self.fields),
            "width": self.header.width,
        }
        self.errors.append(f"{self.where}: row: {said}")
        return False

    def get(self, name: str) -> str:
        position = self.header.columns.get(name)
        return self.fields[position].strip() if position is not None else ""

    def bad(self, name: str, message: str) -> None:
        self.errors.append(f"{self.where}: {name}: {message}")
