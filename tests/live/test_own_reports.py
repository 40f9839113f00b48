"""A person always sees what they reported, and what was done about it, whatever their post.

A steward with no post, or whose report names a block outside the zones of their post, gets
their own report and every later entry on it (assignment, escalation, status, correction) on the
REST log, live on their socket and in its catch-up; another steward's report outside their zones
stays hidden (incidents.selectors.entry_audience).
"""

import asyncio
import json
from typing import Any

import pytest

from safeground.accounts.models import User
from safeground.incidents.models import LogEntry
from safeground.incidents.posts import steward_post_assign
from safeground.incidents.services import (
    Place,
    log_entry_append,
    log_entry_assign,
    log_entry_correct,
    log_entry_escalate,
    log_entry_set_status,
)
from tests import factories

from .conftest import next_frame

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def day(match_day, no_second_factor, settings) -> factories.MatchDay:
    settings.SAFEGROUND_FLASHPOINT = {"threshold": 1000.0}  # no warnings: a log of our making
    factories.member(match_day.cast.home, "steward", username="steward2")
    return match_day


def steward_report(day: factories.MatchDay, username: str, text: str, block: str) -> LogEntry:
    return log_entry_append(
        fixture=day.cup_tie,
        author=User.objects.get(username=username),
        category="missile",
        text=text,
        place=Place(block=block),
    )


def handled(day: factories.MatchDay, report: LogEntry) -> None:
    """The control room deals with the report: given to the supervisor, then resolved."""
    loggist = day.cast["loggist"]
    log_entry_assign(entry=report, author=loggist, assignee=day.cast["supervisor"])
    log_entry_set_status(entry=report, author=loggist, status="resolved")


def rest_log(day: factories.MatchDay, username: str) -> list[dict[str, Any]]:
    user = User.objects.get(username=username)
    response = factories.logged_in(user).get(f"/api/fixtures/{day.cup_tie.pk}/log")
    assert response.status_code == 200
    return list(response.json()["entries"])


@pytest.mark.parametrize("posted", [False, True], ids=["no post", "posted elsewhere"])
def test_a_stewards_rest_log_shows_their_own_report_and_its_state(day, posted) -> None:
    if posted:  # the away section: N-L1 lies outside it
        steward_post_assign(
            fixture=day.cup_tie,
            steward=day.cast["steward"],
            assigned_by=day.cast["safety"],
            zone="away-south-cup",
        )
    mine = steward_report(day, "steward", "Coins thrown from N-L1", "N-L1")
    theirs = steward_report(day, "steward2", "Flag on fire in N-L2", "N-L2")
    handled(day, mine)
    handled(day, theirs)

    entries = rest_log(day, "steward")

    assert [(e["kind"], e["concerns"]) for e in entries] == [
        ("report", None),
        ("assignment", mine.seq),
        ("status", mine.seq),
    ]
    assert entries[0]["text"] == "Coins thrown from N-L1"
    assert {e["incident_status"] for e in entries} == {"resolved"}
    assert "Flag on fire" not in json.dumps(entries)
    # and the other steward sees theirs, not this one
    assert [e["text"] for e in rest_log(day, "steward2") if e["kind"] == "report"] == [
        "Flag on fire in N-L2"
    ]


def test_the_author_hears_every_action_on_their_report_live_and_on_reconnect(
    day, open_socket
) -> None:
    session = str(factories.logged_in(day.cast["steward"]).cookies["sessionid"].value)
    loggist = day.cast["loggist"]
    written: dict[str, LogEntry] = {}

    def report_then_handle() -> None:
        written["mine"] = steward_report(day, "steward", "Coins thrown from N-L1", "N-L1")
        steward_report(day, "steward2", "Flag on fire in N-L2", "N-L2")
        mine = written["mine"]
        log_entry_assign(entry=mine, author=loggist, assignee=day.cast["supervisor"])
        log_entry_escalate(entry=mine, author=loggist, to="control_room")
        log_entry_correct(entry=mine, author=loggist, note="Row F", text="Coins from row F")
        log_entry_set_status(entry=mine, author=loggist, status="resolved")

    async def frames_until_quiet(ws: Any) -> list[dict[str, Any]]:
        found = []
        while True:
            try:
                frame = await next_frame(ws, timeout=0.5)
            except TimeoutError:
                return found
            if frame["type"] == "log.entry":
                found.append(frame["data"])

    async def live() -> list[dict[str, Any]]:
        async with open_socket(day.cup_tie.pk, session, after=0) as ws:
            assert (await next_frame(ws))["type"] == "hello"
            await asyncio.to_thread(report_then_handle)
            return await frames_until_quiet(ws)

    frames = asyncio.run(live())
    states = [(f["entry"]["kind"], f["incident"]["status"]) for f in frames]
    assert states == [
        ("report", "open"),
        ("assignment", "assigned"),
        ("escalation", "escalated"),
        ("correction", "escalated"),
        ("status", "resolved"),
    ]
    assert {f["incident"]["id"] for f in frames} == {written["mine"].pk}
    assert frames[-1]["incident"]["text"] == "Coins from row F"

    async def reconnect(after: int) -> list[dict[str, Any]]:
        async with open_socket(day.cup_tie.pk, session, after=after) as ws:
            assert (await next_frame(ws))["type"] == "hello"
            return await frames_until_quiet(ws)

    # Back after missing everything since their report: caught up on what was done about it.
    caught_up = asyncio.run(reconnect(written["mine"].seq))
    assert [(f["entry"]["kind"], f["incident"]["status"]) for f in caught_up] == states[1:]
    assert [f["entry"]["seq"] for f in asyncio.run(reconnect(0))] == [
        f["entry"]["seq"] for f in frames
    ]


def test_stewards_caught_up_together_each_get_their_own_reports(day) -> None:
    """Two stewards of one kind (no post) caught up in one batch: the catch-up's per-kind filter
    must still give each their own reports and not the other's, as the REST log does."""
    from safeground.incidents.catch_up import folds_forget, live_catch_up
    from safeground.incidents.selectors import visible_log
    from safeground.live.viewers import viewer_for

    fixture = day.cup_tie
    first = steward_report(day, "steward", "Coins thrown from N-L1", "N-L1")
    second = steward_report(day, "steward2", "Flag on fire in N-L2", "N-L2")
    handled(day, first)
    handled(day, second)
    people = [day.cast["steward"], User.objects.get(username="steward2")]
    viewers = [viewer_for(person, fixture) for person in people]
    assert viewers[0].kind == viewers[1].kind
    folds_forget()
    together = live_catch_up(fixture_id=fixture.pk, wants=[(v, 0) for v in viewers])
    for viewer, report, frames in zip(viewers, (first, second), together, strict=True):
        expected = [entry.seq for entry, _ in visible_log(fixture, viewer)]
        assert [seq for seq, _ in frames] == expected
        actions = report.actions.order_by("seq").values_list("seq", flat=True)
        assert expected == [report.seq, *actions]  # the report, its assignment, its status
