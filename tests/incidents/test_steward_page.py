"""The steward's phone page as the server renders it: post, nearby blocks, tasks, their own
reports, service worker."""

import json

import pytest

from safeground.accounts.models import User
from safeground.incidents.posts import steward_post_assign
from safeground.incidents.selectors import steward_post
from safeground.incidents.services import (
    Place,
    log_entry_append,
    log_entry_assign,
    log_entry_set_status,
)
from safeground.incidents.steward import post_blocks, steward_categories, steward_log
from safeground.incidents.views import STEWARD_SW_VERSION
from tests import factories

pytestmark = pytest.mark.django_db


def user(name: str) -> User:
    return User.objects.get(username=name)


def test_nearby_blocks_are_the_posts_own_then_those_touching_them(match_day) -> None:
    cup_tie = match_day.cup_tie
    steward_post_assign(
        fixture=cup_tie, steward=user("steward"), assigned_by=user("safety"), zone="away-south-cup"
    )
    codes = [b.code for b in post_blocks(steward_post(cup_tie, user("steward")))]
    own = ["S-L1", "S-L2", "S-L3"]  # the cup's away section
    assert codes[:3] == own
    assert codes[3:] == ["S-L4"]  # next to S-L3; the North Stand touches none of them
    assert post_blocks(None) == []


def test_the_common_categories_come_first_in_the_stewards_order(db) -> None:
    factories.categories()  # seeded again if a transactional test's flush emptied them
    common, more = steward_categories()
    assert [c.code for c in common][:3] == ["missile", "disorder", "segregation-breach"]
    assert len(common) == 8
    assert "lost-child" in {c.code for c in more}


def test_tasks_are_the_open_incidents_last_assigned_to_the_steward(match_day) -> None:
    cup_tie = match_day.cup_tie
    loggist = user("loggist")

    def report(text: str):
        return log_entry_append(
            fixture=cup_tie, author=loggist, category="other", text=text, place=Place(block="S-L1")
        )

    mine, theirs, closed = report("mine"), report("reassigned"), report("closed")
    for entry in (mine, theirs, closed):
        log_entry_assign(entry=entry, author=loggist, assignee=user("steward"))
    log_entry_assign(entry=theirs, author=loggist, assignee=user("supervisor"))
    log_entry_set_status(entry=closed, author=loggist, status="resolved")
    log_entry_set_status(entry=closed, author=loggist, status="closed")

    tasks = steward_log(cup_tie, user("steward")).tasks
    assert [t["text"] for t in tasks] == ["mine"]
    assert tasks[0] | {"id": 0} == {
        "id": 0,
        "seq": mine.seq,
        "status": "assigned",
        "category_name": "Other",
        "severity": 1,
        "text": "mine",
        "place": "Block S-L1",
        "place_names": {},
        "task": "",
    }


def test_a_steward_with_no_post_has_their_own_reports_as_they_stand(match_day) -> None:
    cup_tie = match_day.cup_tie
    steward, loggist = user("steward"), user("loggist")

    def report(author: User, text: str, block: str):
        return log_entry_append(
            fixture=cup_tie, author=author, category="other", text=text, place=Place(block=block)
        )

    first = report(steward, "Gangway blocked", "N-L1")
    report(loggist, "Flag in N-L2", "N-L2")  # someone else's, outside any post of theirs
    second = report(steward, "Seat broken", "S-L4")
    log_entry_assign(entry=first, author=loggist, assignee=user("supervisor"))
    resolved = log_entry_set_status(entry=first, author=loggist, status="resolved")

    mine = steward_log(cup_tie, steward)
    assert mine.tasks == []
    assert [(r["id"], r["status"], r["updated_seq"]) for r in mine.reports] == [
        (second.pk, "open", second.seq),
        (first.pk, "resolved", resolved.seq),
    ]
    assert mine.reports[1] == {
        "id": first.pk,
        "seq": first.seq,
        "status": "resolved",
        "category_name": "Other",
        "text": "Gangway blocked",
        "place": "Block N-L1",
        "place_names": {},
        "updated_seq": resolved.seq,
        "observed_at": first.observed_at.isoformat(),
    }


def test_the_page_gives_its_script_what_it_needs(match_day, client_for, no_second_factor) -> None:
    cup_tie = match_day.cup_tie
    response = client_for("steward").get(f"/fixtures/{cup_tie.pk}/steward/")
    assert response.status_code == 200
    assert b"No post yet: ask the control room" in response.content
    config = response.context["config"]
    assert (config["username"], config["post"], config["tasks"]) == ("steward", None, [])
    assert config["reports"] == []
    assert config["serviceWorker"] == f"/fixtures/{cup_tie.pk}/steward/sw.js"
    assert "<script>" not in response.content.decode()  # CSP: no inline scripts


def test_the_service_worker_keeps_the_page_and_its_files(match_day, client_for, no_second_factor):
    cup_tie = match_day.cup_tie
    response = client_for("steward").get(f"/fixtures/{cup_tie.pk}/steward/sw.js")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/javascript")
    assert "no-cache" in response["Cache-Control"]
    body = response.content.decode()
    assert "&quot;" not in body
    assert f'const PAGE = "/fixtures/{cup_tie.pk}/steward/";' in body
    assert f'const CACHE = "safeground-steward-{cup_tie.pk}-v{STEWARD_SW_VERSION}-' in body
    assets = json.loads(body.split("const ASSETS = ")[1].split(";\n")[0])
    assert {"/static/safeground/steward-1.js", "/static/safeground/live-1.js"} <= set(assets)
    # Its scripts' imports too: an import missing offline stops the page's script.
    assert {"/static/safeground/outbox-1.js", "/static/safeground/api-1.js"} <= set(assets)
