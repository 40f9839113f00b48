"""Exports and the read API: the same rows, no supporter's name unless the role may read the
register and gives a reason, and then an access record for each person named."""

import csv
import io
import json

from safeground.bans.models import AccessRecord, Ban
from safeground.entry.models import Scan
from safeground.incidents.models import LogEntry
from safeground.incidents.services import Place
from safeground.reports.match_report import match_report
from tests import factories

from .conftest import Played


def rows(response) -> list[dict[str, str]]:  # type: ignore[no-untyped-def]
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def test_the_log_export_holds_every_entry_the_reader_may_see(
    played: Played, client_for, no_second_factor
) -> None:
    url = f"/fixtures/{played.cup.pk}/export/log.csv"
    entries = LogEntry.objects.filter(fixture=played.cup)

    home = rows(client_for("loggist").get(url))
    police = rows(client_for("police").get(url))
    assert [int(r["seq"]) for r in home] == sorted(entries.values_list("seq", flat=True))
    assert len(police) == entries.filter(home_only=False).count() < len(home)
    assert {r["category"] for r in home if r["kind"] == "report"} == {
        e.category.code for e in [*played.reports, played.debrief] if e
    }


def test_a_spreadsheet_never_runs_text_from_the_log(
    played: Played, client_for, no_second_factor
) -> None:
    factories.report(played.cup, text='=HYPERLINK("http://example.invalid","click")')
    exported = rows(client_for("loggist").get(f"/fixtures/{played.cup.pk}/export/log.csv"))
    assert exported[-1]["text"].startswith("'=HYPERLINK")


def test_the_scans_export_has_every_scan_and_no_barcode(
    played: Played, client_for, no_second_factor
) -> None:
    response = client_for("loggist").get(f"/fixtures/{played.cup.pk}/export/scans.json")
    exported = response.json()
    assert len(exported) == len(played.scans) == Scan.objects.filter(fixture=played.cup).count()
    assert all("barcode" not in row for row in exported)
    codes = [code for _, code, _ in played.scans]
    assert not any(code in json.dumps(exported) for code in codes)
    assert [row["reason"] for row in exported] == [r.reason or "" for _, _, r in played.scans]


def test_bans_without_a_reason_carry_no_names(played: Played, client_for, no_second_factor) -> None:
    before = AccessRecord.objects.count()
    url = f"/grounds/{played.day.ground.code}/export/bans.json"
    exported = client_for("auditor").get(url).json()
    assert len(exported) == Ban.objects.filter(organisation=played.day.cast.home).count()
    assert all("last_name" not in row for row in exported)
    assert AccessRecord.objects.count() == before


def test_names_for_the_register_readers_with_a_reason_and_each_read_recorded(
    played: Played, client_for, no_second_factor
) -> None:
    url = f"/grounds/{played.day.ground.code}/export/bans.csv"
    people = {b.person_id for b in Ban.objects.filter(organisation=played.day.cast.home)}
    before = AccessRecord.objects.filter(action="read").count()

    exported = rows(client_for("banofficer").get(url, {"reason": "Season return to the police"}))
    assert {r["last_name"] for r in exported} == {
        b.person.last_name for b in Ban.objects.select_related("person")
    }
    assert AccessRecord.objects.filter(action="read").count() == before + len(people)
    record = AccessRecord.objects.filter(action="read").first()
    assert record is not None and record.reason == "Season return to the police"

    assert client_for("loggist").get(url, {"reason": "Curious about them"}).status_code == 403
    refused = client_for("banofficer").get(url, {"reason": "x"})
    assert refused.status_code == 400 and refused.json()["field"] == "reason"
    assert AccessRecord.objects.filter(action="read").count() == before + len(people)


def test_the_season_export_has_a_row_per_match(
    played: Played, client_for, no_second_factor
) -> None:
    exported = rows(
        client_for("safety").get(f"/grounds/{played.day.ground.code}/export/season.csv")
    )
    assert [int(r["incidents"]) for r in exported] == [0, len(played.incidents)]
    assert int(exported[1]["incidents_missile"]) == sum(
        1 for e in played.reports if e.category.code == "missile"
    )


def test_the_api_answers_with_the_report_and_pages_the_scans(
    played: Played, client_for, no_second_factor
) -> None:
    client = client_for("police")
    figures = client.get(f"/api/reports/fixtures/{played.cup.pk}").json()
    expected = match_report(played.cup, home_only=False, with_plan=False).figures()
    assert figures == json.loads(json.dumps(expected))

    first = client.get(f"/api/reports/fixtures/{played.cup.pk}/scans", {"limit": 5}).json()
    assert len(first["scans"]) == 5 and first["next_after"] == first["scans"][-1]["id"]
    rest = client.get(
        f"/api/reports/fixtures/{played.cup.pk}/scans",
        {"after": first["next_after"], "limit": 5000},
    ).json()
    assert len(first["scans"]) + len(rest["scans"]) == len(played.scans)
    assert rest["next_after"] is None
    refused = client.get(f"/api/reports/fixtures/{played.cup.pk}/scans", {"limit": 0})
    assert refused.status_code == 422
    assert refused.json() == {
        "code": "invalid_request",
        "field": "limit",
        "detail": "limit: must be at least 1",
    }


def test_the_api_log_matches_the_export_and_the_season_filters(
    played: Played, client_for, no_second_factor
) -> None:
    client = client_for("safety")
    log = client.get(f"/api/reports/fixtures/{played.cup.pk}/log").json()
    assert len(log) == LogEntry.objects.filter(fixture=played.cup).count()
    ground = played.day.ground.code
    season = client.get(
        f"/api/reports/grounds/{ground}/season", {"competition": played.cup.competition_id}
    ).json()
    assert [m["id"] for m in season["matches"]] == [played.cup.pk]
    factories.report(played.day.league_match, category="medical", place=Place(block="N-L1"))
    everything = client.get(f"/api/reports/grounds/{ground}/season").json()
    assert everything["totals"]["incidents"] == len(played.incidents) + 1


def test_the_api_names_people_only_for_a_reason_from_a_register_reader(
    played: Played, client_for, no_second_factor
) -> None:
    url = f"/api/reports/grounds/{played.day.ground.code}/bans"
    before = AccessRecord.objects.count()
    unnamed = client_for("auditor").get(url).json()
    assert unnamed and all(row["last_name"] is None for row in unnamed)
    assert client_for("auditor").get(url, {"reason": "Audit of the season"}).status_code == 403
    assert AccessRecord.objects.count() == before

    named = client_for("security").get(url, {"reason": "Return to the football unit"}).json()
    assert {row["last_name"] for row in named} == {
        b.person.last_name for b in Ban.objects.select_related("person")
    }
    people = {b.person_id for b in Ban.objects.filter(pk__in=[row["id"] for row in named])}
    assert AccessRecord.objects.count() == before + len(people)


def test_every_export_downloads_the_season_json_too(
    played: Played, client_for, no_second_factor
) -> None:
    """Issue 27: season.json opened in the browser while the other exports downloaded."""
    client = client_for("safety")
    ground = played.day.ground.code
    for url in (
        f"/grounds/{ground}/export/season.json",
        f"/grounds/{ground}/export/season.csv",
        f"/fixtures/{played.cup.pk}/export/log.json",
    ):
        response = client.get(url)
        assert response.status_code == 200, url
        assert response["Content-Disposition"].startswith("attachment; filename="), url
    response = client.get(f"/grounds/{ground}/export/season.json")
    assert response["Content-Disposition"] == f'attachment; filename="season-{ground}.json"'
    assert json.loads(response.content)["totals"]["matches"] == 2
