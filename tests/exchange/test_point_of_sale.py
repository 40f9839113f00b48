"""The league check at the point of sale and in the background (docs/adr/0015, fourth Update):
one holder checked end to end against the exchange over HTTP (this test's live server plays the
exchange, with another club's ban published), the proof checked, the ticket import checking
only the holders it brought, and a fixture's whole check run in the background with progress.
The people are invented."""

import json
from datetime import date
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from voprf import ristretto

from safeground import background, signing
from safeground.entry.models import TicketFlag
from safeground.entry.services import tickets_import
from safeground.exchange import blinding, check_runs, checking, oprf, services, tokens
from safeground.exchange.client import ExchangeClient, ExchangeRefused
from safeground.exchange.models import (
    Club,
    ExchangeRecord,
    HolderToken,
    LeagueCheckRun,
    PublishedBan,
    PublishedToken,
)
from safeground.exchange.services import club_enrol
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)

BANNED = ("Ellís Ó Vantwíck", date(1990, 3, 4))
VARIANT = "VANTWICK ELLIS O"  # as another club's ticketing system holds the name


@pytest.fixture(autouse=True)
def _fresh_process_copies():
    """Each test's database is new: the process's copies of the published set and the
    declared tickets (kept by the exchange's address and the fixture's number) are not it."""
    checking._published.clear()
    checking._declared.clear()


@pytest.fixture
def league(settings, live_server):
    """This test's server is the exchange too: this club enrolled, Northbank Rovers publishing
    one ban."""
    settings.SAFEGROUND_ROLE = "exchange"
    settings.SAFEGROUND_EXCHANGE_URL = live_server.url
    settings.SAFEGROUND_EXCHANGE_PUBLIC_KEY = oprf.public_key().hex()
    club_enrol(name="Riverside Athletic", contact="security@riverside.example",
               public_key=signing.public_key_json()["public_key"])  # fmt: skip
    other = club_enrol(name="Northbank Rovers", contact="security@northbank.example",
                       public_key=signing.b64url(bytes(range(32))))  # fmt: skip
    inputs = tokens.banned_inputs(*BANNED, filler_key=b"northbank")
    made = blinding.evaluated(inputs, oprf.evaluate, oprf.public_key(), processes=1)
    ban = PublishedBan.objects.create(club=other, reference="ab" * 16, kind="club_ban",
                                      is_life=True, published_at=other.enrolled_at)  # fmt: skip
    PublishedToken.objects.bulk_create(PublishedToken(ban=ban, token=t.hex()) for t in made)
    ExchangeRecord.objects.create(at=other.enrolled_at, club=other, action="publish", count=1)
    people = factories.cast()
    day = factories.match_day(people)
    return {"people": people, "fixture": day.cup_tie}


def sale(fixture, name: str, born: date, barcode: str):
    return factories.ticket(fixture, barcode=barcode, holder_name=name, holder_dob=born)


def test_a_banned_holder_is_found_at_the_point_of_sale_and_a_clean_one_not(league) -> None:
    fixture = league["fixture"]
    sale(fixture, VARIANT, date(1990, 4, 3), "SALE1")  # day and month swapped
    sale(fixture, "Jules Quellmoor", date(1980, 1, 2), "SALE2")

    banned = checking.tickets_check(fixture=fixture, barcodes=["SALE1"])
    clean = checking.tickets_check(fixture=fixture, barcodes=["SALE2"])
    background.settle()

    assert (banned.matched, banned.matched_tickets, banned.flagged) == (1, ("SALE1",), 1)
    assert (clean.matched, clean.matched_tickets, clean.flagged) == (0, (), 0)
    flag = TicketFlag.objects.select_related("league_ban", "ticket").get()
    assert (flag.ticket.barcode, flag.league_ban.issuing_club) == ("SALE1", "Northbank Rovers")
    # The exchange recorded two point-of-sale checks of one holder each, and their outcomes.
    checks = ExchangeRecord.objects.filter(action="check", detail="sale").order_by("pk")
    assert [c.count for c in checks] == [1, 1]
    outcomes = ExchangeRecord.objects.filter(action="outcome").order_by("pk")
    assert [o.matched for o in outcomes] == [1, 0]


def test_a_forged_proof_is_refused_and_nothing_is_cached_or_flagged(league) -> None:
    fixture = league["fixture"]
    sale(fixture, VARIANT, date(1990, 4, 3), "SALE1")
    impostor = ristretto.Evaluator.from_seed(bytes(32), b"another key")

    class Forging(ExchangeClient):
        """The exchange answering with another key than the one pinned."""

        def post(self, route: str, payload: dict[str, Any]) -> Any:
            answer = super().post(route, payload)
            if route == "checks" and payload.get("blinded"):
                elements = [ristretto.BlindedInput.deserialize(bytes.fromhex(b))
                            for b in payload["blinded"]]  # fmt: skip
                answer["evaluated"] = impostor.evaluate_batch(elements).serialize().hex()
            return answer

    with pytest.raises(ExchangeRefused, match="proof does not verify"):
        checking.tickets_check(fixture=fixture, barcodes=["SALE1"], client=Forging())
    assert not HolderToken.objects.exists()
    assert not TicketFlag.objects.exists()


def test_a_holder_checked_before_is_not_evaluated_again(league) -> None:
    fixture = league["fixture"]
    sale(fixture, "Jules Quellmoor", date(1980, 1, 2), "SALE2")
    checking.tickets_check(fixture=fixture, barcodes=["SALE2"])
    checking.tickets_check(fixture=fixture, barcodes=["SALE2"])
    background.settle()
    evaluated = ExchangeRecord.objects.filter(action="evaluate").values_list("count", flat=True)
    assert list(evaluated) == [1]


def test_the_api_checks_a_few_tickets_and_names_what_is_wrong(league, no_second_factor) -> None:
    fixture = league["fixture"]
    sale(fixture, VARIANT, date(1990, 3, 4), "SALE1")
    client = Client()
    client.force_login(league["people"]["banofficer"])
    url = f"/api/league/fixtures/{fixture.pk}/check-tickets"

    def post(body: dict[str, Any]):
        return client.post(url, json.dumps(body), content_type="application/json")

    found = post({"tickets": ["SALE1"]})
    assert found.status_code == 200, found.content
    assert (found.json()["matched"], found.json()["matched_tickets"]) == (1, ["SALE1"])
    unknown = post({"tickets": ["NOPE1"]})
    assert (unknown.status_code, unknown.json()["field"]) == (400, "tickets")
    assert "NOPE1" in unknown.json()["detail"]
    assert post({"tickets": []}).status_code == 422
    assert post({"tickets": [f"T{n}" for n in range(checking.SALE_HOLDERS + 1)]}).status_code == 422
    other = Client()
    other.force_login(league["people"]["loggist"])
    assert other.post(url, json.dumps({"tickets": ["SALE1"]}),
                      content_type="application/json").status_code == 403  # fmt: skip
    background.settle()


def test_the_command_checks_a_ticket_and_refuses_bad_input(league, capsys) -> None:
    fixture = league["fixture"]
    sale(fixture, VARIANT, date(1990, 3, 4), "SALE1")
    call_command("league_check", fixture=fixture.pk, ticket=["SALE1"])
    said = capsys.readouterr().out
    assert "1 matched" in said and "ticket SALE1" in said
    with pytest.raises(CommandError, match="not a ticket of this fixture: NOPE"):
        call_command("league_check", fixture=fixture.pk, ticket=["NOPE"])
    with pytest.raises(CommandError, match="--fixture: no fixture"):
        call_command("league_check", fixture=99999, ticket=["SALE1"])
    background.settle()


def test_the_ticket_import_checks_only_the_holders_it_brings(league, tmp_path) -> None:
    fixture = league["fixture"]
    header = "barcode,name,date_of_birth,block,row,seat,area,end"
    first = ["I0001,Jules Quellmoor,1980-01-02,N-L1,A,1,,home",
             f"I0002,{VARIANT},1990-03-04,N-L1,A,2,,home"]  # fmt: skip
    path = tmp_path / "tickets.csv"
    path.write_text("\n".join([header, *first]) + "\n")
    tickets_import(fixture=fixture, path=path)
    background.settle()
    path.write_text("\n".join([header, *first, "I0003,Rowan Eskerby,1975-05-06,N-L1,A,3,,home"]))
    tickets_import(fixture=fixture, path=path)
    background.settle()

    checks = ExchangeRecord.objects.filter(action="check").order_by("pk")
    assert [(c.count, c.detail) for c in checks] == [(2, "sale"), (1, "sale")]
    assert TicketFlag.objects.get().ticket.barcode == "I0002"


def test_a_fixtures_whole_check_runs_in_the_background_with_its_progress(league) -> None:
    fixture = league["fixture"]
    sale(fixture, VARIANT, date(1990, 3, 4), "SALE1")
    for n in range(30):
        sale(fixture, f"Casey Darrowfen{n}", date(1985, 2, 3), f"BULK{n}")

    run = check_runs.league_check_start(fixture=fixture, asked_by="banofficer")
    assert (run.total, run.done, run.finished_at) == (31, 0, None)
    # While it runs, a second start is the same run.
    assert check_runs.league_check_start(fixture=fixture, asked_by="safety").pk in {run.pk}
    assert background.settle()
    run.refresh_from_db()
    assert (run.done, run.total, run.failures, run.matched, run.flagged) == (31, 31, 0, 1, 1)
    assert run.finished_at is not None and run.started_at <= run.finished_at


def test_a_background_check_that_fails_says_how_many_holders_it_did_not_check(
    league, settings
) -> None:
    fixture = league["fixture"]
    sale(fixture, VARIANT, date(1990, 3, 4), "SALE1")
    settings.SAFEGROUND_EXCHANGE_URL = "http://127.0.0.1:9"  # nobody answers there
    run = check_runs.league_check_start(fixture=fixture, asked_by="banofficer")
    assert background.settle()
    run.refresh_from_db()
    assert (run.done, run.failures) == (0, 1)
    assert run.finished_at is not None and "127.0.0.1:9" in run.failure
    assert LeagueCheckRun.objects.count() == 1
    assert Club.objects.count() == 2


def test_point_of_sale_checks_have_their_own_bound_and_are_not_flagged_as_searches(
    league, settings
) -> None:
    settings.SAFEGROUND_LIMITS = {**settings.SAFEGROUND_LIMITS, "exchange.sale": "8/h",
                                  "exchange.club": "2/h"}  # fmt: skip
    club = Club.objects.get(name="Riverside Athletic")
    for _sale in range(8):
        services.check_begin(club=club, fixture="fixture 5", holders=1, tickets=300, coming=900,
                             sale=True)  # fmt: skip
    with pytest.raises(services.OverBound, match="point-of-sale checks"):
        services.check_begin(club=club, fixture="fixture 5", holders=1, tickets=300, coming=900,
                             sale=True)  # fmt: skip
    with pytest.raises(services.ExchangeError, match="at the point of sale"):
        services.check_begin(club=club, fixture="fixture 5", holders=checking.SALE_HOLDERS + 1,
                             tickets=300, coming=900, sale=True)  # fmt: skip
    # The whole checks' bound is untouched by the sales, and no sale was flagged unusual.
    services.check_begin(club=club, fixture="fixture 5", holders=200, tickets=300, coming=900)
    assert not ExchangeRecord.objects.filter(action="unusual").exists()


def test_the_published_set_is_not_sent_again_while_unchanged(league) -> None:
    client = ExchangeClient()
    etag, first = client.get_if_changed("published", "")
    assert etag and [ban["club"] for ban in first["bans"]] == ["Northbank Rovers"]
    assert client.get_if_changed("published", etag) == (etag, None)  # a 304
    other = Club.objects.get(name="Northbank Rovers")
    ExchangeRecord.objects.create(at=other.enrolled_at, club=other, action="publish", count=1)
    changed, again = client.get_if_changed("published", etag)
    assert changed != etag and again is not None
