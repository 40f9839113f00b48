"""Importing a ticketing system's CSV export: every bad file and bad line named, nothing
half-written, the same file twice updates instead of duplicating, holders matched on import."""

from collections.abc import Callable
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from safeground.entry.models import Ticket, TicketFlag
from safeground.entry.services import tickets_import
from safeground.entry.ticket_file import TicketFileError

pytestmark = pytest.mark.django_db

HEADER = "barcode,first_name,last_name,date_of_birth,block,row,seat,area,end"
GOOD = [
    "T0001,Amy,Quillrigg,1990-03-14,N-L1,A,1,,home",
    'T0002,"Jo, Jr",Tarrholm,14/03/1991,N-L1,A,2,,home',
    "T0003,Kai,Vostfold,01/12/1985,S-L1,B,3,,away",
    "T0004,Mo,Yellgate,1979-07-30,,,,Family terrace,home",
]
Write = Callable[..., Path]


@pytest.fixture
def write(tmp_path) -> Write:
    def write(*lines: str, name: str = "tickets.csv", encoding: str = "utf-8") -> Path:
        path = tmp_path / name
        path.write_bytes("\n".join(lines).encode(encoding) + b"\n")
        return path

    return write


def errors_of(cup, path: Path) -> list[str]:
    with pytest.raises(TicketFileError) as refused:
        tickets_import(fixture=cup, path=path)
    assert Ticket.objects.count() == 0, "tickets were written from a refused file"
    return refused.value.errors


def test_a_good_file_is_imported_whole(cup, write) -> None:
    report = tickets_import(fixture=cup, path=write(HEADER, *GOOD))
    assert (report.created, report.updated, report.unchanged) == (4, 0, 0)
    jo = Ticket.objects.get(barcode="T0002")
    assert (jo.holder_name, jo.holder_dob.isoformat(), jo.place) == (
        "Jo, Jr Tarrholm",
        "1991-03-14",
        "N-L1 row A seat 2",
    )
    assert Ticket.objects.get(barcode="T0004").place == "Family terrace"
    assert Ticket.objects.get(barcode="T0003").end == "away"


def test_bom_semicolons_quotes_and_a_full_name_column(cup, write) -> None:
    path = write(
        "\ufeffBarcode;Name;DOB;Block;Row;Seat;End",
        'T1;"Dunne; Sean";12/04/1988;N-L2;C;4;Home',
        "T2;Zoë Caskholm;1995-01-19;N-L2;C;5;H",
    )
    tickets_import(fixture=cup, path=path)
    assert dict(Ticket.objects.values_list("barcode", "holder_name")) == {
        "T1": "Dunne; Sean", "T2": "Zoë Caskholm",
    }  # fmt: skip


def test_the_same_file_twice_updates_rather_than_duplicates(cup, write) -> None:
    path = write(HEADER, *GOOD)
    tickets_import(fixture=cup, path=path)
    again = tickets_import(fixture=cup, path=path)
    assert (again.created, again.updated, again.unchanged) == (0, 0, 4)
    moved = write(HEADER, *GOOD[:3], "T0004,Mo,Yellgate,1979-07-30,N-L1,B,9,,home")
    report = tickets_import(fixture=cup, path=moved)
    assert (report.created, report.updated, report.unchanged) == (0, 1, 3)
    assert Ticket.objects.count() == 4
    assert Ticket.objects.get(barcode="T0004").place == "N-L1 row B seat 9"


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ([], ["line 1: file: is empty (no header, no tickets)"]),
        ([HEADER], ["line 2: file: has a header but no tickets"]),
        (
            ["code,name,dob,block,row,seat,end", "X,Amy,1990-01-01,N-L1,A,1,home"],
            ["line 1: header: no 'barcode' column (found: code, name, dob, block, row, seat, end)"],
        ),
        (
            ["barcode,name,dob,end", "X,Amy,1990-01-01,home"],
            [
                "line 1: header: no 'block' (with row and seat) or 'area' column "
                "(barcode, name, dob, end)"
            ],
        ),
        (
            ["barcode,dob,block,row,seat,end", "X,1990-01-01,N-L1,A,1,home"],
            [
                "line 1: header: no 'name' column, nor first_name and last_name "
                "(barcode, dob, block, row, seat, end)"
            ],
        ),
    ],
    ids=["empty", "header-only", "no-barcode", "no-seat-or-area", "no-name"],
)
def test_bad_files_are_refused_with_the_reason(cup, write, lines, expected) -> None:
    assert errors_of(cup, write(*lines)) == expected


def test_a_file_that_is_not_utf8_is_refused(cup, write) -> None:
    path = write(HEADER, "T1,Zoë,Caskholm,1990-01-01,N-L1,A,1,,home", encoding="latin-1")
    assert errors_of(cup, path) == [
        "line 2: file: is not UTF-8 text (byte 73); export the file as UTF-8 CSV"
    ]


def test_a_missing_file_is_refused(cup, tmp_path) -> None:
    assert errors_of(cup, tmp_path / "nope.csv")[0].startswith("file: cannot be read")


def test_every_bad_line_is_reported_and_nothing_is_written(cup, write) -> None:
    path = write(
        HEADER,
        *GOOD,  # lines 2-5 are good
        "T0005,Amy,Quillrigg,1990-02-30,N-L1,A,5,,home",  # 6: not a real date
        "T0006,Amy,Quillrigg,14/03/90,N-L1,A,6,,home",  # 7: two-digit year
        "T0007,Amy,Quillrigg,2999-01-01,N-L1,A,7,,home",  # 8: future
        "T0008,,,1990-01-01,N-L1,A,8,,home",  # 9: no name
        "T0009,Amy,Quillrigg,1990-01-01,Z-9,A,9,,home",  # 10: unknown block
        "T0010,Amy,Quillrigg,1990-01-01,N-L1,ZZ,10,,home",  # 11: no such row
        "T0011,Amy,Quillrigg,1990-01-01,N-L1,A,99,,home",  # 12: seat out of range
        "T0012,Amy,Quillrigg,1990-01-01,N-L1,A,x,,home",  # 13: seat not a number
        "T0013,Amy,Quillrigg,1990-01-01,N-L1,A,13,,middle",  # 14: bad end
        "T0014,Amy,Quillrigg,1990-01-01,N-L1,A,14,Terrace,home",  # 15: seat and area
        "T0015,Amy,Quillrigg,1990-01-01,,,,,home",  # 16: neither
        "T0001,Amy,Quillrigg,1990-01-01,N-L1,A,16,,home",  # 17: duplicate barcode
        "T0017,Amy,Quillrigg,1990-01-01,N-L1,A,1,,home",  # 18: seat sold twice
        "T0018,Amy,Quillrigg,1990-01-01,N-L1,A",  # 19: too few fields
        ",Amy,Quillrigg,1990-01-01,N-L1,A,19,,home",  # 20: no barcode
        "T 20,Amy,Quillrigg,1990-01-01,N-L1,A,20,,home",  # 21: space in barcode
        "T0021,Amy,Quillrigg,,N-L1,A,21,,home",  # 22: no date of birth
    )
    assert errors_of(cup, path) == [
        "line 6: date_of_birth: '1990-02-30' is not a real date",
        "line 7: date_of_birth: '14/03/90' has a two-digit year; give all four digits (dd/mm/yyyy)",
        "line 8: date_of_birth: '2999-01-01' is in the future",
        "line 9: name: is missing",
        "line 10: block: no block 'Z-9' at this ground",
        "line 11: row: block N-L1 has no row 'ZZ'",
        "line 12: seat: block N-L1 has seats 1 to 34",
        "line 13: seat: 'x' is not a seat number",
        "line 14: end: 'middle' must be home or away",
        "line 15: area: give a seat (block, row, seat) or an unreserved area, not both",
        "line 16: block: give a seat (block, row, seat) or an unreserved area",
        "line 17: barcode: 'T0001' is also on line 2",
        "line 18: seat: row A seat 1 of this block is also sold on line 2",
        "line 19: row: has 6 fields; the header has 9",
        "line 20: barcode: is missing",
        "line 21: barcode: 'T 20' must be 1 to 64 printable characters without spaces",
        "line 22: date_of_birth: is missing",
    ]


def test_a_quoted_field_over_two_lines_keeps_the_line_numbers_right(cup, write) -> None:
    path = write(
        HEADER,
        'T1,"Amy\nMay",Quillrigg,1990-01-01,N-L1,A,1,,home',
        "T2,Bo,Quillrigg,1990-13-01,N-L1,A,2,,home",
    )
    assert errors_of(cup, path) == ["line 4: date_of_birth: '1990-13-01' is not a real date"]


def test_the_command_reports_and_exits_non_zero(cup, write) -> None:
    bad = write(HEADER, "T1,Amy,Quillrigg,1990-01-01,N-L1,A,1,,nowhere")
    err = StringIO()
    with pytest.raises(CommandError, match=r"1 error in .*; nothing was imported"):
        call_command("import_tickets", str(bad), "--fixture", str(cup.pk), stderr=err)
    assert "line 2: end: 'nowhere' must be home or away" in err.getvalue()
    with pytest.raises(CommandError, match="--fixture: no match with id 999999"):
        call_command("import_tickets", str(bad), "--fixture", "999999")
    out, err = StringIO(), StringIO()
    good = write(HEADER, *GOOD, name="good.csv")
    call_command("import_tickets", str(good), "--fixture", str(cup.pk), stdout=out, stderr=err)
    assert "4 new, 0 updated, 0 unchanged" in out.getvalue()
    assert "[##############################] 4/4" in err.getvalue()  # the progress bar


def test_holders_are_matched_against_bans_in_force_on_import(cup, write) -> None:
    path = write(
        HEADER,
        "T1,Sean,Dunmorrow,12/04/1988,N-L1,A,1,,home",  # banned: Seán Dunmorrow
        "T2,Marcus,Kestrelle,1990-08-05,N-L1,A,2,,home",  # banned, day and month swapped
        "T3,Dean,Pelliter,1979-03-02,N-L1,A,3,,home",  # a namesake born another day
        "T4,Billy,Strathgowan,1999-07-07,N-L1,A,4,,home",  # only proposed: not in force
        "T5,Terry,Oldcastle-Venn,1970-03-03,N-L1,A,5,,home",  # ban expired in 2013
    )
    report = tickets_import(fixture=cup, path=path)
    assert report.match.flagged == 2
    flags = {f.ticket.barcode: f for f in TicketFlag.objects.select_related("ticket")}
    assert set(flags) == {"T1", "T2"}
    assert flags["T2"].score == 90
    assert "date of birth with day and month swapped" in flags["T2"].reasons
    # Importing again raises no second flag.
    assert tickets_import(fixture=cup, path=path).match.flagged == 0
