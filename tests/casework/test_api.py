"""The casework API (issue 27): a match's cases, a case's subjects (each read recorded),
outcomes and evidence particulars; recording an outcome; the police's arrest return."""

import pytest

from safeground.bans.models import AccessRecord
from safeground.casework.models import Outcome
from safeground.casework.services import subject_add
from tests import factories

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_second_factor")]


@pytest.fixture
def case(match_day):
    cup = match_day.cup_tie
    made = factories.case(cup, entries=[factories.report(cup, category="missile")])
    holder = factories.ticket(cup, block="S-L2", end="away", barcode="AWAY-API")
    subject_add(case=made, by=made.opened_by, kind="ticket_holder", ticket=holder)
    factories.evidence(made)
    return made


def test_a_case_worker_lists_and_reads_the_matchs_cases(case, client_for):
    client = client_for("police")
    listed = client.get(f"/api/fixtures/{case.fixture_id}/cases")
    assert listed.status_code == 200
    assert [c["id"] for c in listed.json()] == [case.pk]
    read = client.get(f"/api/cases/{case.pk}").json()
    assert (read["title"], read["subjects"], read["evidence"]) == (case.title, 1, 1)
    assert read["entries"] == [case.entries.get().seq]


def test_reading_the_subjects_names_the_holder_and_leaves_an_access_record(case, client_for):
    before = AccessRecord.objects.filter(action="read").count()
    answer = client_for("safety").get(f"/api/cases/{case.pk}/subjects")
    assert answer.status_code == 200
    (subject,) = answer.json()
    assert subject["kind"] == "ticket_holder" and subject["ticket"] == "AWAY-API"
    record = AccessRecord.objects.filter(action="read").first()
    assert AccessRecord.objects.filter(action="read").count() == before + 1
    assert record.username == "safety" and f"case #{case.pk}" in record.reason


def test_evidence_particulars_without_the_file(case, client_for):
    (item,) = client_for("banofficer").get(f"/api/cases/{case.pk}/evidence").json()
    evidence = case.evidence.get()
    assert item["sha256"] == evidence.sha256 and item["size"] == evidence.size
    assert "file" not in item and "url" not in item


def test_recording_an_arrest_without_a_subject_then_reading_it(case, client_for):
    client = client_for("police")
    made = client.post(
        f"/api/cases/{case.pk}/outcomes",
        {"kind": "arrest", "home_office_offence": "missile", "club": "away", "reference": "API/1"},
        content_type="application/json",
    )
    assert made.status_code == 201, made.content
    assert (made.json()["club"], made.json()["subject"]) == ("away", None)
    listed = client.get(f"/api/cases/{case.pk}/outcomes").json()
    assert [(o["kind"], o["reference"]) for o in listed] == [("arrest", "API/1")]


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        # The schema states these; the service refuses them.
        ({"kind": "arrest", "reference": " "}, 400, "reference"),
        ({"kind": "nfa"}, 400, "note"),
        ({"kind": "club_ban", "subject": 1}, 422, "kind"),
        ({"kind": "ejection", "subject": 10**9}, 404, ""),
        ({"kind": "arrest", "reference": "X", "offence": "Theft Act 1968 s.1"}, 409, "offence"),
    ],
)
def test_a_refused_outcome_says_why_in_the_one_shape_and_writes_nothing(
    case, client_for, body, status, field
):
    answer = client_for("police").post(
        f"/api/cases/{case.pk}/outcomes", body, content_type="application/json"
    )
    assert answer.status_code == status
    assert set(answer.json()) == {"code", "field", "detail"}
    if field:
        assert answer.json()["field"].endswith(field)
    assert not Outcome.objects.exists()


def test_material_is_not_arrested(case, client_for):
    material = subject_add(case=case, by=case.opened_by, kind="material", description="a flag")
    answer = client_for("police").post(
        f"/api/cases/{case.pk}/outcomes",
        {"kind": "ejection", "subject": material.pk},
        content_type="application/json",
    )
    assert answer.status_code == 409 and answer.json()["field"] == "subject"


def test_the_arrest_return_through_the_api(match_day, client_for):
    cup = match_day.cup_tie
    url = f"/api/fixtures/{cup.pk}/arrests"
    body = {
        "arrests": [
            {"offence_group": "alcohol", "club": "away", "reference": "PR/1"},
            {"offence_group": "pitch_incursion", "club": "home", "reference": "PR/2",
             "time": cup.kickoff.isoformat()},
        ]
    }  # fmt: skip
    done = client_for("police").post(url, body, content_type="application/json")
    assert done.status_code == 200 and done.json()["created"] == 2
    again = client_for("police").post(url, body, content_type="application/json").json()
    assert (again["created"], again["already"]) == (0, ["PR/1", "PR/2"])
    assert Outcome.objects.filter(kind="arrest").count() == 2
    twice = {"arrests": [body["arrests"][0] | {"reference": "PR/3"}] * 2}
    refused = client_for("police").post(url, twice, content_type="application/json")
    assert refused.status_code == 409 and "arrests[1]: reference" in refused.json()["detail"]
    assert Outcome.objects.filter(kind="arrest").count() == 2
