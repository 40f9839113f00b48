"""Forged tickets (issue 41 item 2): a barcode that fits the ground's ticket format (prefix,
length, a Luhn check digit or an HMAC signature) but is on no list is refused as `forged`, apart
from one that is plainly not a ticket (`unknown_ticket`). On both databases, by the statement and
by the ORM path; online and from a scanner's offline upload."""

from datetime import timedelta

import pytest

from safeground import clock
from safeground.entry import decision
from safeground.entry.models import Scan
from safeground.venues.models import Ground
from safeground.venues.ticket_format import (
    TicketFormat,
    hmac_signature,
    luhn_digit,
    luhn_valid,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(params=["sql", "orm"])
def engine(request, monkeypatch):
    monkeypatch.setattr(decision, "USE_SQL", request.param == "sql")
    return request.param


def luhn_barcode(body: str, prefix: str = "WH") -> str:
    return prefix + body + luhn_digit(body)


@pytest.fixture
def luhn_ground(gates):
    Ground.objects.filter(pk=gates.fixture.ground_id).update(
        ticket_prefix="WH", ticket_length=12, ticket_check="luhn"
    )
    return gates


def test_luhn_accepts_its_check_digit_and_refuses_one_changed() -> None:
    assert luhn_valid("79927398713")  # the classic example
    assert not luhn_valid("79927398710")
    assert not luhn_valid("7992739871X")


def test_a_format_fits_only_the_prefix_length_and_check() -> None:
    fmt = TicketFormat(prefix="WH", length=12, check="luhn")
    good = luhn_barcode("123456789")
    assert len(good) == 12 and fmt.fits(good)
    assert not fmt.fits("XX" + good[2:])  # another prefix
    assert not fmt.fits(good + "0")  # another length
    assert not fmt.fits(good[:-1] + str((int(good[-1]) + 1) % 10))  # a wrong check digit
    assert not TicketFormat().fits(good)  # no format set: nothing is forged


def test_an_hmac_format_needs_the_signature_of_the_key() -> None:
    key = b"issuing-system-key"
    fmt = TicketFormat(prefix="WH", check="hmac", key=key)
    signed = "WH0001234" + hmac_signature("WH0001234", key)
    assert fmt.fits(signed)
    assert not fmt.fits("WH0001234" + hmac_signature("WH0001234", b"another key"))
    assert not TicketFormat(prefix="WH", check="hmac").fits(signed)  # no key: cannot tell


def test_a_barcode_that_fits_but_was_never_issued_is_forged(luhn_ground, engine) -> None:
    forged = luhn_barcode("555000111")
    body = luhn_ground.scan(forged).json()
    assert (body["decision"], body["reason"]) == ("deny", "forged")
    assert "forged" in body["message"] and "supervisor" in body["message"]
    assert body["ticket"] is None
    scan = Scan.objects.get()
    assert (scan.reason, scan.gate.code, scan.turnstile.code) == ("forged", "F", "F03")


def test_a_barcode_that_is_plainly_not_a_ticket_stays_unknown(luhn_ground, engine) -> None:
    assert luhn_ground.scan("NOT-A-TICKET").json()["reason"] == "unknown_ticket"
    wrong_digit = luhn_barcode("555000111")[:-1] + "X"
    assert luhn_ground.scan(wrong_digit).json()["reason"] == "unknown_ticket"


def test_a_ticket_of_another_match_is_that_not_forged(luhn_ground, engine) -> None:
    """A genuine ticket for another match fits the format too: wrong_match comes first."""
    from safeground.matches.models import Fixture
    from tests.entry.conftest import make_ticket

    league = Fixture.objects.get(away_club__name="Middlesbrough")
    genuine = luhn_barcode("100200300")
    make_ticket(league, genuine, "S-L2", "away")
    assert luhn_ground.scan(genuine).json()["reason"] == "wrong_match"


def test_an_issued_ticket_that_fits_is_admitted(luhn_ground, engine) -> None:
    from tests.entry.conftest import make_ticket

    issued = luhn_barcode("424242424")
    make_ticket(luhn_ground.fixture, issued, "S-L2", "away")
    assert luhn_ground.scan(issued).json()["decision"] == "admit"


def test_a_ground_without_a_format_has_no_forged_tickets(gates, engine) -> None:
    assert gates.scan(luhn_barcode("555000111")).json()["reason"] == "unknown_ticket"


def test_an_offline_unknown_that_fits_is_stored_as_forged(luhn_ground) -> None:
    from tests.entry.test_offline import scan, upload

    at = luhn_ground.before_kickoff
    forged = luhn_barcode("555000222")
    results = upload(
        luhn_ground.key,
        scan(forged, at, decision="deny", reason="unknown_ticket"),
        scan("JUNK", at, decision="deny", reason="unknown_ticket"),
    ).json()["results"]
    assert [r["reason"] for r in results] == ["forged", "unknown_ticket"]
    stored = dict(Scan.objects.values_list("barcode", "reason"))
    assert stored == {forged: "forged", "JUNK": "unknown_ticket"}
    assert Scan.objects.get(barcode=forged).scanned_at == at  # in its own time


def test_the_venue_file_sets_the_format_and_refuses_a_bad_check() -> None:
    from safeground.errors import FileRefused
    from safeground.venues.venue_file.ground import read_tickets
    from safeground.venues.venue_file.specs import VenueCheck
    from safeground.yaml_file import yaml_load

    def read(text: str):
        check = VenueCheck("venue.yaml")
        doc = yaml_load(text=text, filename="venue.yaml", refused=FileRefused, what="a venue")
        return read_tickets(check, doc, 1), check.errors

    spec, errors = read("{prefix: WH, length: 12, check: luhn}")
    assert spec is not None and (spec.prefix, spec.length, spec.check) == ("WH", 12, "luhn")
    assert not errors
    spec, errors = read("{prefix: WH, check: crc32}")
    assert spec is None and "ground.tickets.check" in errors[0]


def test_the_police_commander_exports_the_forged_tickets_and_is_on_the_access_trail(
    luhn_ground, no_second_factor
) -> None:
    """Reportable to the police: each forged ticket with its time and turnstile, the export on
    the access trail; the unknown barcodes are not in it."""
    from django.test import Client

    from safeground.accounts.models import User
    from safeground.bans.models import AccessRecord

    first, second = luhn_barcode("555000111"), luhn_barcode("555000222")
    at = luhn_ground.before_kickoff
    luhn_ground.scan(first, "F03", at=at)
    luhn_ground.scan(second, "F07", at=at + timedelta(minutes=2))
    luhn_ground.scan("JUNK", "F03", at=at)
    police = Client()
    police.force_login(User.objects.get(username="police"))
    response = police.get(f"/fixtures/{luhn_ground.fixture.pk}/export/forged.csv")
    assert response.status_code == 200
    lines = response.content.decode().splitlines()
    assert lines[0] == "scanned_at,stored_at,gate,turnstile,barcode,offline"
    assert [line.split(",")[2:5] for line in lines[1:]] == [
        ["Gate F (away)", "F03", first],
        ["Gate F (away)", "F07", second],
    ]
    assert lines[1].startswith(clock.iso(at))
    record = AccessRecord.objects.get(action="export_forged")
    assert (record.username, record.detail) == ("police", "2 forged tickets")
    assert record.organisation_id == luhn_ground.fixture.ground.organisation_id


def test_a_steward_may_not_export_the_forged_tickets(luhn_ground, no_second_factor) -> None:
    from django.test import Client

    from safeground.accounts.models import User
    from safeground.bans.models import AccessRecord

    steward = Client()
    steward.force_login(User.objects.get(username="steward"))
    assert steward.get(f"/fixtures/{luhn_ground.fixture.pk}/export/forged.csv").status_code == 403
    assert not AccessRecord.objects.filter(action="export_forged").exists()
