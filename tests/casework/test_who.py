"""Who was there: the seats near an incident from the venue data, their holders and whether they
went in; only roles with the right to identify, each look-up an access record."""

import json

import pytest
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.test.utils import CaptureQueriesContext

from safeground.bans.models import AccessRecord
from safeground.casework.selectors import who_was_there
from safeground.casework.services import CaseworkError
from safeground.entry.models import Ticket
from safeground.incidents.services import Place
from safeground.venues.models import Block, BlockAdjacency
from tests import factories

pytestmark = pytest.mark.django_db

REASON = "Identify who threw coins from S-L2"


@pytest.fixture
def seated(match_day):
    """Away tickets in S-L1..S-L3 on rows B to H (seat 5 of each), and a home one in N-L1."""
    cup = match_day.cup_tie
    made = [
        factories.ticket(
            cup,
            block=block,
            row=row,
            seat="5",
            barcode=f"{block}-{row}",
            holder_name=f"Holder {block} {row}",
        )
        for block in ("S-L1", "S-L2", "S-L3")
        for row in "BCDEFGH"
    ]
    made.append(factories.ticket(cup, block="N-L1", row="D", barcode="N-L1-D"))
    return made


def _near(tickets, blocks: set[str], rows: set[str]) -> set[str]:
    return {t.barcode for t in tickets if t.block.code in blocks and t.row in rows}


def test_the_entrys_rows_either_side_in_its_block_and_the_blocks_the_venue_says_touch(
    match_day, seated
):
    cup, safety = match_day.cup_tie, match_day.cast["safety"]
    entry = factories.report(cup, place=Place(block="S-L2", first_row="D"))
    # Which blocks touch S-L2, read from the venue data independently of the look-up.
    s_l2 = Block.objects.get(ground=cup.ground, code="S-L2")
    touching = {
        (pair.neighbour if pair.block_id == s_l2.pk else pair.block).code
        for pair in BlockAdjacency.objects.filter(block=s_l2)
        | BlockAdjacency.objects.filter(neighbour=s_l2)
    }
    rows = {"C", "D", "E"}  # D, one row either side

    found = who_was_there(
        user=safety, fixture=cup, entry_ids=[entry.pk], rows=1, adjacent=True, reason=REASON
    )

    assert {h.barcode for h in found.holders} == _near(seated, {"S-L2", *touching}, rows)
    assert {h.block for h in found.holders if h.adjacent} == touching
    only_block = who_was_there(
        user=safety, fixture=cup, entry_ids=[entry.pk], rows=1, adjacent=False, reason=REASON
    )
    assert {h.barcode for h in only_block.holders} == _near(seated, {"S-L2"}, rows)


def test_an_entry_without_rows_covers_its_whole_block_and_rows_widen_a_range(match_day, seated):
    cup, police = match_day.cup_tie, match_day.cast["police"]
    whole = factories.report(cup, place=Place(block="S-L3"))
    ranged = factories.report(cup, place=Place(block="S-L1", first_row="B", last_row="C"))
    found = who_was_there(
        user=police,
        fixture=cup,
        entry_ids=[whole.pk, ranged.pk],
        rows=2,
        adjacent=False,
        reason=REASON,
    )
    expected = _near(seated, {"S-L3"}, set("ABCDEFGHIJ")) | _near(seated, {"S-L1"}, set("ABCDE"))
    assert {h.barcode for h in found.holders} == expected


def test_whether_and_when_each_holder_went_in_comes_from_the_turnstile(match_day, seated, scan):
    cup = match_day.cup_tie
    assert scan("S-L2-D")["decision"] == "admit"
    entry = factories.report(cup, place=Place(block="S-L2", first_row="D"))
    found = who_was_there(
        user=match_day.cast["banofficer"],
        fixture=cup,
        entry_ids=[entry.pk],
        rows=0,
        adjacent=False,
        reason=REASON,
    )
    admitted = Ticket.objects.get(barcode="S-L2-D")
    (holder,) = found.holders
    assert (holder.entered, holder.entered_at, holder.gate) == (
        True,
        admitted.entered_at,
        admitted.entered_gate.name,
    )
    assert holder.name == admitted.holder_name


def test_every_look_up_is_an_access_record_with_its_reason(match_day, seated):
    cup, spotter = match_day.cup_tie, match_day.cast["spotter"]
    entry = factories.report(cup, place=Place(block="S-L2", first_row="D"))
    before = AccessRecord.objects.filter(action="identify").count()
    for reason in (REASON, "Second look, after the CCTV review"):
        found = who_was_there(
            user=spotter, fixture=cup, entry_ids=[entry.pk], rows=1, adjacent=True, reason=reason
        )
    records = AccessRecord.objects.filter(action="identify").order_by("pk")
    assert records.count() == before + 2
    last = records.last()
    assert (last.username, last.reason, last.organisation_id) == (
        "spotter",
        "Second look, after the CCTV review",
        cup.ground.organisation_id,
    )
    assert f"#{entry.seq}" in last.detail and f"{found.people} holders" in last.detail


@pytest.mark.parametrize("username", ["steward", "loggist", "supervisor", "auditor", "liaison"])
def test_roles_without_the_right_cannot_look_up_and_nothing_is_recorded(
    match_day, seated, username, client_for, no_second_factor
):
    cup = match_day.cup_tie
    entry = factories.report(cup, place=Place(block="S-L2", first_row="D"))
    before = AccessRecord.objects.count()
    response = client_for(username).post(
        f"/api/fixtures/{cup.pk}/who-was-there",
        json.dumps({"entries": [entry.pk], "rows": 1, "reason": REASON}),
        content_type="application/json",
    )
    assert response.status_code == 403
    assert response.json()["code"] == "forbidden"
    assert AccessRecord.objects.count() == before


def test_the_api_answers_names_and_admissions_for_those_with_the_right(
    match_day, seated, client_for, no_second_factor
):
    cup = match_day.cup_tie
    entry = factories.report(cup, place=Place(block="S-L2", first_row="D"))
    response = client_for("banofficer").post(
        f"/api/fixtures/{cup.pk}/who-was-there",
        json.dumps({"entries": [entry.pk], "rows": 0, "adjacent": False, "reason": REASON}),
        content_type="application/json",
    )
    assert response.status_code == 200
    body = response.json()
    assert body["areas"] == ["S-L2, row D"]
    assert [(h["barcode"], h["name"], h["entered"]) for h in body["holders"]] == [
        ("S-L2-D", "Holder S-L2 D", False)
    ]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"reason": "x"}, "reason"),
        ({"rows": 11}, "rows"),
        ({"entries": []}, "entries"),
        ({"entries": [999999]}, "entries"),
    ],
)
def test_bad_look_ups_are_refused_by_field_and_not_recorded(
    match_day, seated, client_for, no_second_factor, change, field
):
    cup = match_day.cup_tie
    entry = factories.report(cup, place=Place(block="S-L2", first_row="D"))
    before = AccessRecord.objects.count()
    body = {"entries": [entry.pk], "rows": 1, "reason": REASON} | change
    response = client_for("safety").post(
        f"/api/fixtures/{cup.pk}/who-was-there", json.dumps(body), content_type="application/json"
    )
    assert response.status_code in {400, 404, 422}
    assert set(response.json()) == {"code", "field", "detail"}
    if response.status_code != 422:
        assert response.json()["field"] == field
    assert AccessRecord.objects.count() == before


def test_an_entry_placed_at_a_gate_has_nobody_seated_there(match_day):
    cup = match_day.cup_tie
    entry = factories.report(cup, place=Place(gate="F"))
    with pytest.raises(CaseworkError) as refused:
        who_was_there(
            user=match_day.cast["safety"],
            fixture=cup,
            entry_ids=[entry.pk],
            rows=1,
            adjacent=True,
            reason=REASON,
        )
    assert refused.value.field == "entries"


def test_the_query_count_does_not_grow_with_the_match(match_day, django_assert_max_num_queries):
    """The cup tie of the demo has ~55,000 tickets: the look-up reads them in one query."""
    cup, safety = match_day.cup_tie, match_day.cast["safety"]
    entry = factories.report(cup, place=Place(block="S-L2", first_row="D"))
    counts = []
    for n in (10, 3000):
        Ticket.objects.filter(fixture=cup).delete()
        factories.tickets(cup, n, block="S-L2", prefix=f"N{n}")
        Ticket.objects.filter(fixture=cup).update(row="D")
        safety = type(safety).objects.get(pk=safety.pk)  # a fresh request's user
        with CaptureQueriesContext(connection) as queries:
            found = who_was_there(
                user=safety, fixture=cup, entry_ids=[entry.pk], rows=1, adjacent=True, reason=REASON
            )
        assert (found.people, len(found.holders)) == (n, min(n, 100))  # a page of names
        counts.append(len(queries))
    assert counts[0] == counts[1]
    with django_assert_max_num_queries(10):
        who_was_there(
            user=safety, fixture=cup, entry_ids=[entry.pk], rows=1, adjacent=True, reason=REASON
        )


def test_the_police_cannot_look_up_from_a_home_only_entry(match_day, seated):
    cup = match_day.cup_tie
    entry = factories.report(cup, place=Place(block="S-L2", first_row="D"), home_only=True)
    with pytest.raises(PermissionDenied):
        who_was_there(
            user=match_day.cast["police"], fixture=cup, entry_ids=[entry.pk], rows=1,
            adjacent=True, reason=REASON,
        )  # fmt: skip
    found = who_was_there(
        user=match_day.cast["safety"], fixture=cup, entry_ids=[entry.pk], rows=0,
        adjacent=False, reason=REASON,
    )  # fmt: skip
    assert {h.barcode for h in found.holders} == {"S-L2-D"}


def _api(client, cup, path: str, body: dict):
    url = f"/api/fixtures/{cup.pk}/who-was-there{path}"
    return client.post(url, json.dumps(body), content_type="application/json")


def test_the_api_starts_narrow_the_entrys_own_rows_and_no_adjacent_block(
    match_day, seated, client_for, no_second_factor
):
    """Issue 27: the defaults were two rows either side and the adjacent blocks."""
    cup = match_day.cup_tie
    entry = factories.report(cup, place=Place(block="S-L2", first_row="D"))
    body = _api(client_for("safety"), cup, "", {"entries": [entry.pk], "reason": REASON}).json()
    assert body["areas"] == ["S-L2, row D"]
    assert [h["barcode"] for h in body["holders"]] == ["S-L2-D"]
    assert (body["people"], body["page"], body["pages"], body["large"]) == (1, 1, 1, False)


def test_the_count_comes_before_any_name_and_is_not_an_access_record(
    match_day, seated, client_for, no_second_factor, scan
):
    cup = match_day.cup_tie
    assert scan("S-L2-C")["decision"] == "admit"
    entry = factories.report(cup, place=Place(block="S-L2", first_row="D"))
    before = AccessRecord.objects.count()
    response = _api(client_for("police"), cup, "/count", {"entries": [entry.pk], "rows": 1})
    assert response.status_code == 200
    assert response.json() == {
        "areas": ["S-L2, rows C–E"], "people": 3, "entered": 1, "large": False,
    }  # fmt: skip
    assert "Holder" not in response.content.decode()
    assert AccessRecord.objects.count() == before
    refused = _api(client_for("steward"), cup, "/count", {"entries": [entry.pk]})
    assert refused.status_code == 403


def test_names_come_a_page_at_a_time_each_page_recorded(
    match_day, client_for, no_second_factor, settings
):
    settings.SAFEGROUND_WHO_LARGE = 1000
    cup = match_day.cup_tie
    factories.tickets(cup, 250, block="S-L2", prefix="P")
    entry = factories.report(cup, place=Place(block="S-L2"))  # no row: the whole block
    police = client_for("police")
    before = AccessRecord.objects.filter(action="identify").count()
    pages = [
        _api(police, cup, "", {"entries": [entry.pk], "reason": REASON, "page": n}).json()
        for n in (1, 2, 3)
    ]
    assert [len(p["holders"]) for p in pages] == [100, 100, 50]
    assert {p["people"] for p in pages} == {250} and {p["pages"] for p in pages} == {3}
    barcodes = [h["barcode"] for p in pages for h in p["holders"]]
    assert len(set(barcodes)) == 250  # every holder once, none on two pages
    records = AccessRecord.objects.filter(action="identify").order_by("pk")
    assert records.count() == before + 3
    assert "page 2 of 3 (names 101–200)" in records[before + 1].detail
    beyond = _api(police, cup, "", {"entries": [entry.pk], "reason": REASON, "page": 4})
    assert (beyond.status_code, beyond.json()["field"]) == (404, "page")
    assert AccessRecord.objects.count() == before + 3


def test_a_large_look_up_says_so_and_is_recorded_as_such(
    match_day, client_for, no_second_factor, settings
):
    settings.SAFEGROUND_WHO_LARGE = 40
    cup = match_day.cup_tie
    factories.tickets(cup, 41, block="S-L2", prefix="L")
    entry = factories.report(cup, place=Place(block="S-L2"))
    police = client_for("police")
    counted = _api(police, cup, "/count", {"entries": [entry.pk]}).json()
    assert (counted["people"], counted["large"]) == (41, True)
    body = _api(police, cup, "", {"entries": [entry.pk], "reason": REASON}).json()
    assert body["large"] is True
    record = AccessRecord.objects.latest("pk")
    assert (record.action, record.reason) == ("identify_large", REASON)
    assert "41 holders" in record.detail
    settings.SAFEGROUND_WHO_LARGE = 41  # 41 people is not more than 41
    _api(police, cup, "", {"entries": [entry.pk], "reason": REASON})
    assert AccessRecord.objects.latest("pk").action == "identify"


def test_the_page_counts_narrow_first_and_asks_again_before_naming_a_wider_search(
    match_day, seated, client_for, no_second_factor
):
    cup = match_day.cup_tie
    entry = factories.report(cup, place=Place(block="S-L2", first_row="D"))
    case = factories.case(cup, entries=[entry], by=match_day.cast["banofficer"])
    officer = client_for("banofficer")
    url = f"/cases/{case.pk}/who-was-there/"
    before = AccessRecord.objects.count()

    opened = officer.get(url)
    assert opened.status_code == 200
    assert "S-L2, row D" in opened.text and "<strong>1 person</strong>" in opened.text
    assert "Holder S-L2 D" not in opened.text  # the count, no name
    wider = officer.get(url, {"rows": "1", "adjacent": "on"})
    assert wider.status_code == 200 and "wider search" in wider.text
    assert "Holder" not in wider.text
    assert AccessRecord.objects.count() == before

    unconfirmed = {"rows": "1", "adjacent": "True", "page": "1", "reason": REASON}
    refused = officer.post(url, unconfirmed)
    assert refused.status_code == 400 and "confirm you need it" in refused.text
    assert "Holder S-L2 C" not in refused.text
    assert AccessRecord.objects.count() == before

    named = officer.post(url, unconfirmed | {"widen": "on"})
    assert named.status_code == 200
    assert "Holder S-L2 C" in named.text and "Holder S-L1 E" in named.text
    assert AccessRecord.objects.count() == before + 1
    narrow = officer.post(url, {"rows": "0", "adjacent": "False", "page": "1", "reason": REASON})
    assert narrow.status_code == 200 and "Holder S-L2 D" in narrow.text
    assert "Holder S-L2 C" not in narrow.text
