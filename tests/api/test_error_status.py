"""The HTTP status of a refusal is its error class's: the same refusal is the same status on a
page and from the API, and no raise site or edge sets its own (ADR 0021)."""

import ast
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

import safeground
from safeground.bans.models import Ban

pytestmark = pytest.mark.django_db

A_BAN_ENDING_BEFORE_IT_STARTS = {
    "first_names": "Ellis",
    "last_name": "Vantwick",
    "type": "club_ban",
    "scope": "club",
    "starts_on": "2016-11-01",
    "ends_on": "2015-01-01",
    "grounds": "Threw a coin",
}


def test_a_ban_conflict_is_409_on_the_page_and_from_the_api(client_for, no_second_factor) -> None:
    officer: Client = client_for("banofficer")
    page = officer.post(
        reverse("ban_propose"), {**A_BAN_ENDING_BEFORE_IT_STARTS, "date_of_birth": "28/02/1990"}
    )
    api = officer.post(
        "/api/register/proposals",
        {**A_BAN_ENDING_BEFORE_IT_STARTS, "date_of_birth": "1990-02-28"},
        content_type="application/json",
    )
    assert page.status_code == api.status_code == 409
    assert api.json()["code"] == "ban_refused" and api.json()["field"] == "ends_on"
    assert not Ban.objects.exists()


def test_no_refusal_is_given_a_status_where_it_is_raised() -> None:
    """`status=` is not a parameter of SafegroundError: a raise site that passed one fails as it
    runs; this finds one that a test has not run."""
    given = []
    for path in Path(safeground.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)):
                continue
            if any(keyword.arg == "status" for keyword in node.exc.keywords):
                given.append(f"{path.name}:{node.lineno}")
    assert given == []
