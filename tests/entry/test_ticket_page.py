"""Tickets imported on the fixture's page: the checks and the matching of `import-tickets`, every
bad line shown, nothing written unless the whole file is good."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from safeground.entry.models import Ticket, TicketFlag
from tests import factories

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_second_factor")]

HEADER = "barcode,name,date_of_birth,block,row,seat,end\n"


def upload(text: str) -> dict:
    return {"file": SimpleUploadedFile("tickets.csv", text.encode(), content_type="text/csv")}


def test_tickets_from_the_page_are_imported_and_matched(match_day, client_for) -> None:
    banned = factories.ban(match_day.cast.home)
    holder = f"{banned.person.first_names} {banned.person.last_name}"
    dob = banned.person.date_of_birth.isoformat()
    answer = client_for("safety").post(
        reverse("fixture_tickets", args=[match_day.cup_tie.pk]),
        upload(
            HEADER + "P-1,Alex Tarrfold,1990-01-02,S-L2,A,1,away\n"
            f"P-2,{holder},{dob},N-L1,B,4,home\n"
        ),
    )
    assert answer.status_code == 200
    assert b"Imported: 2 new, 0 updated, 0 unchanged" in answer.content
    assert Ticket.objects.filter(fixture=match_day.cup_tie).count() == 2
    assert TicketFlag.objects.filter(ticket__barcode="P-2").exists()


def test_a_bad_file_on_the_page_names_every_row_and_writes_nothing(match_day, client_for) -> None:
    answer = client_for("safety").post(
        reverse("fixture_tickets", args=[match_day.cup_tie.pk]),
        upload(
            HEADER + "P-1,Alex Tarrfold,1990-01-02,S-L2,A,1,away\n"
            "P-2,Sam Dornlade,1990-13-01,S-L2,A,2,away\n"
            "P-3,Jo Vostpeth,1991-01-01,Z-9,A,3,sideways\n"
        ),
    )
    assert answer.status_code == 400
    errors = answer.context["errors"]
    assert errors == [
        "line 3: date_of_birth: '1990-13-01' is not a real date",
        "line 4: end: 'sideways' must be home or away",
        "line 4: block: no block 'Z-9' at this ground",
    ]
    assert not Ticket.objects.filter(fixture=match_day.cup_tie).exists()
