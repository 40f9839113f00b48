"""One visibility rule for the log: what a person gets over `GET /api/fixtures/{id}/log` is what
their socket brings them, in its catch-up and live (incidents.selectors.entry_audience).

A steward sees the entries of their post's zones and those addressed to them (their tasks, their
own reports: test_own_reports.py); the control room sees every entry.
"""

import asyncio
import json
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection

from safeground.incidents.posts import steward_post_assign
from safeground.incidents.selectors import RECORD_KINDS
from safeground.incidents.services import (
    Place,
    log_entry_append,
    log_entry_assign,
    log_entry_set_status,
)
from tests import factories

from .conftest import next_frame

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def day(match_day, no_second_factor, settings) -> factories.MatchDay:
    settings.SAFEGROUND_FLASHPOINT = {"threshold": 1000.0}  # no warnings: a log of our making
    factories.categories()
    steward_post_assign(
        fixture=match_day.cup_tie,
        steward=match_day.cast["steward"],
        assigned_by=match_day.cast["safety"],
        zone="away-south-cup",  # blocks S-L1..S-L3, served by gate F
    )
    return match_day


def session_of(day: factories.MatchDay, username: str) -> str:
    return str(factories.logged_in(day.cast[username]).cookies["sessionid"].value)


def report(day: factories.MatchDay, text: str, **place: str) -> Any:
    return log_entry_append(
        fixture=day.cup_tie,
        author=day.cast["loggist"],
        category="missile",
        text=text,
        place=Place(**place),
    )


def first_half(day: factories.MatchDay) -> None:
    """Entries in and out of the away section, and a task in the north given to the steward."""
    cast = day.cast
    in_zone = report(day, "Coins from S-L1", block="S-L1")
    report(day, "Flag in N-L1", block="N-L1")
    task = report(day, "Fan fainted in N-L2", block="N-L2")
    log_entry_assign(entry=task, author=cast["loggist"], assignee=cast["steward"])
    log_entry_assign(entry=in_zone, author=cast["loggist"], assignee=cast["supervisor"])


def second_half(day: factories.MatchDay) -> None:
    """More of both, live: a report at the away gate, the north task resolved, then another
    north report that nobody gives the steward."""
    cast = day.cast
    report(day, "Crush at gate F", gate="F")
    task = day.cup_tie.log_entries.get(text="Fan fainted in N-L2")
    log_entry_set_status(entry=task, author=cast["loggist"], status="resolved")
    report(day, "Smoke in N-L3", block="N-L3")
    report(day, "Seat broken in S-L3", block="S-L3")


async def log_frames(ws: ClientConnection, quiet: float = 0.5) -> list[dict[str, Any]]:
    """The `log.entry` frames the socket brings until it is quiet."""
    frames = []
    while True:
        try:
            frame = await next_frame(ws, timeout=quiet)
        except TimeoutError:
            return frames
        if frame["type"] == "log.entry":
            frames.append(frame["data"]["entry"])


def socket_view(day, open_socket, username: str) -> tuple[list[dict], list[dict]]:
    """(the catch-up of the first half, the second half live) on the user's socket."""
    session = session_of(day, username)

    async def watch() -> tuple[list[dict], list[dict]]:
        async with open_socket(day.cup_tie.pk, session, after=0) as ws:
            assert (await next_frame(ws))["type"] == "hello"
            caught_up = await log_frames(ws)
            await asyncio.to_thread(second_half, day)
            return caught_up, await log_frames(ws)

    return asyncio.run(watch())


def rest_view(day, username: str) -> list[dict]:
    client = factories.logged_in(day.cast[username])
    response = client.get(f"/api/fixtures/{day.cup_tie.pk}/log", {"limit": 500})
    assert response.status_code == 200
    entries = response.json()["entries"]
    for entry in entries:
        del entry["incident_status"]  # the REST log's own addition: the incident as it is now
    return entries


def texts(entries: list[dict]) -> list[str]:
    return [e["text"] or f"{e['kind']} of #{e['concerns']}" for e in entries]


def test_a_stewards_rest_log_is_what_their_socket_brings(day, open_socket) -> None:
    first_half(day)
    caught_up, live = socket_view(day, open_socket, "steward")
    # Seqs as the chain gave them (the steward's post is a chained record before the reports).
    task, in_zone = (
        day.cup_tie.log_entries.get(text=t).seq for t in ("Fan fainted in N-L2", "Coins from S-L1")
    )
    assert texts(caught_up) == [
        "Coins from S-L1",
        f"assignment of #{task}",  # a report outside their zones, but the task is theirs
        f"assignment of #{in_zone}",  # on a report in their zone, though given to someone else
    ]
    assert texts(live) == ["Crush at gate F", f"status of #{task}", "Seat broken in S-L3"]
    assert rest_view(day, "steward") == caught_up + live
    assert json.dumps(rest_view(day, "steward")).count("Flag in N-L1") == 0


def test_the_control_room_sees_every_entry_both_ways(day, open_socket) -> None:
    first_half(day)
    caught_up, live = socket_view(day, open_socket, "loggist")
    # Every entry of the log; the chained records (the steward's post) are no log entries.
    shown = day.cup_tie.log_entries.exclude(kind__in=RECORD_KINDS)
    everything = list(shown.order_by("seq").values_list("seq", flat=True))
    assert [e["seq"] for e in caught_up + live] == everything
    assert rest_view(day, "loggist") == caught_up + live


def test_a_steward_gets_the_photos_of_the_entries_they_may_see_and_no_others(
    day, open_socket
) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    from safeground.incidents.photos import log_entry_photo_add

    png = bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
    urls = {}
    for text, block in (("Coins from S-L1", "S-L1"), ("Flag in N-L1", "N-L1")):
        upload = SimpleUploadedFile("pitch.png", png, content_type="image/png")
        photo = log_entry_photo_add(
            entry=report(day, text, block=block), author=day.cast["loggist"], upload=upload
        )
        urls[block] = f"/api/fixtures/{day.cup_tie.pk}/log/{photo.entry_id}/photos/{photo.pk}"
    session = session_of(day, "steward")

    async def caught_up() -> list[dict]:
        async with open_socket(day.cup_tie.pk, session, after=0) as ws:
            frames = []
            while True:
                try:
                    frames.append(await next_frame(ws, timeout=0.5))
                except TimeoutError:
                    return [f["data"] for f in frames if f["type"] == "log.photo"]

    assert [photo["url"] for photo in asyncio.run(caught_up())] == [urls["S-L1"]]
    steward = factories.logged_in(day.cast["steward"])
    assert steward.get(urls["S-L1"]).status_code == 200
    assert steward.get(urls["N-L1"]).status_code == 403
    assert factories.logged_in(day.cast["loggist"]).get(urls["N-L1"]).status_code == 200


def test_a_photo_erased_by_retention_is_not_sent_to_a_screen_catching_up(day) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from safeground.incidents.catch_up import folds_forget, live_catch_up
    from safeground.incidents.photos import log_entry_photo_add
    from safeground.live.viewers import viewer_for
    from safeground.privacy.services import retention_apply

    photos = [
        log_entry_photo_add(
            entry=report(day, text, block="S-L1"),
            author=day.cast["loggist"],
            upload=factories.upload(),
        )
        for text in ("Coins from S-L1", "Flare in S-L1")
    ]
    loggist = viewer_for(day.cast["loggist"], day.cup_tie)

    def photos_caught_up() -> list[int]:
        folds_forget()
        [frames] = live_catch_up(fixture_id=day.cup_tie.pk, wants=[(loggist, 0)])
        return [json.loads(f)["data"]["photo"] for _, f in frames if '"log.photo"' in f]

    assert photos_caught_up() == [p.pk for p in photos]
    factories.case(day.cup_tie, entries=[photos[1].entry], by=day.cast["banofficer"])
    kickoff = day.cup_tie.kickoff
    retention_apply(today=timezone.localdate(kickoff) + timedelta(days=400))
    photos[0].refresh_from_db()
    assert photos[0].erased_at is not None and not photos[0].image
    assert photos_caught_up() == [photos[1].pk]  # the other is held by the open case


def test_sockets_caught_up_together_each_get_what_the_rest_log_shows_them(day) -> None:
    """A reconnect storm's catch-ups are read together (live/batches.py) and filtered once per
    kind of viewer: each socket still gets exactly its own view, its tasks included."""
    from safeground.incidents.catch_up import folds_forget, live_catch_up
    from safeground.incidents.selectors import visible_log
    from safeground.live.viewers import viewer_for

    first_half(day)
    second_half(day)
    cast, fixture = day.cast, day.cup_tie
    steward_post_assign(
        fixture=fixture, steward=cast["supervisor"], assigned_by=cast["safety"], zone="home-north"
    )
    people = ["steward", "loggist", "spotter", "supervisor", "steward", "loggist"]
    viewers = [viewer_for(cast[name], fixture) for name in people]
    last = fixture.log_entries.order_by("-seq").values_list("seq", flat=True)[0]
    afters = [0, 0, 3, 0, last - 4, last]
    folds_forget()
    together = live_catch_up(fixture_id=fixture.pk, wants=list(zip(viewers, afters, strict=True)))
    for name, viewer, after, frames in zip(people, viewers, afters, together, strict=True):
        expected = [entry.seq for entry, _ in visible_log(fixture, viewer) if entry.seq > after]
        assert [json.loads(frame)["seq"] for _, frame in frames] == expected, (name, after)
        assert [seq for seq, _ in frames] == expected
    assert together[0] != together[3]  # a steward's view, and a supervisor's in another zone


def test_the_pages_reads_of_the_log_are_the_rest_logs_rule(day) -> None:
    """A steward's page (log_seen) and the API's page (log_after) read the process's fold of the
    log: the same entries as visible_log for each viewer, a steward's with each incident's state
    just after the entry, the API's with its state now; an entry appended since is in the next
    read."""
    from safeground.incidents.catch_up import folds_forget, log_after, log_seen
    from safeground.incidents.selectors import visible_log
    from safeground.live.viewers import viewer_for

    first_half(day)
    cast, fixture = day.cast, day.cup_tie
    folds_forget()
    for name in ("steward", "loggist", "spotter", "supervisor"):
        viewer = viewer_for(cast[name], fixture)
        assert log_seen(fixture_id=fixture.pk, viewer=viewer) == visible_log(fixture, viewer), name
    second_half(day)  # after the fold was read: what came since is read on top of it
    for name in ("steward", "loggist", "spotter", "supervisor"):
        viewer = viewer_for(cast[name], fixture)
        expected = visible_log(fixture, viewer)
        assert log_seen(fixture_id=fixture.pk, viewer=viewer) == expected, name
        now = {entry.concerns_id or entry.pk: state for entry, state in expected}
        after = expected[len(expected) // 2][0].seq
        assert log_after(fixture_id=fixture.pk, viewer=viewer, after_seq=after) == [
            (entry, now[entry.concerns_id or entry.pk])
            for entry, _ in expected
            if entry.seq > after
        ], name
