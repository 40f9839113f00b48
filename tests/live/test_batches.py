"""Sockets' reads done together (live/batches.py): what arrives while a batch is read waits for
the next; one alone goes at once; a bad knock fails alone, the database away fails the batch."""

import asyncio
import threading
from collections.abc import Sequence

import psycopg
import pytest

from safeground.group_commit import OnLoop
from safeground.live.admission import (
    CLOSE_FORBIDDEN,
    CLOSE_NO_FIXTURE,
    CLOSE_NOT_LOGGED_IN,
    Knock,
    admit,
    admit_many,
)
from safeground.live.batches import reads_together
from safeground.live.events import Viewer


class Reader:
    """A read that records each batch and can be held, so that items pile up behind it."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.hold = threading.Event()
        self.hold.set()
        self.started = threading.Event()

    def __call__(self, items: Sequence[int]) -> list[int]:
        self.batches.append(list(items))
        self.started.set()
        self.hold.wait(5)
        if -1 in items:
            raise psycopg.OperationalError("the database went away")
        if -2 in items:
            raise ValueError("a knock that cannot be read")
        return [item * 10 for item in items]

    async def busy_with(self, batches: OnLoop[int, int], item: int) -> asyncio.Future[int]:
        """Start a read of `item` and hold it there: what is asked meanwhile waits behind it."""
        self.hold.clear()
        self.started.clear()
        reading = asyncio.ensure_future(batches.ask(item))
        await asyncio.to_thread(self.started.wait, 5)
        return reading


def test_items_that_arrive_during_a_read_go_together_in_the_next() -> None:
    reader = Reader()

    async def scenario() -> None:
        batches = reads_together(reader)
        assert await batches.ask(1) == 10  # alone: at once, no waiting for company
        first = await reader.busy_with(batches, 2)
        rest = [asyncio.ensure_future(batches.ask(n)) for n in range(3, 8)]
        await asyncio.sleep(0.05)
        reader.hold.set()
        assert await first == 20
        assert await asyncio.gather(*rest) == [30, 40, 50, 60, 70]

    asyncio.run(scenario())
    assert reader.batches == [[1], [2], [3, 4, 5, 6, 7]]


def test_a_failed_read_fails_each_of_its_batch_and_the_next_batch_goes_on() -> None:
    reader = Reader()

    async def scenario() -> None:
        batches = reads_together(reader)
        held = await reader.busy_with(batches, 1)
        failing = [asyncio.ensure_future(batches.ask(n)) for n in (-1, 2)]
        await asyncio.sleep(0.05)
        reader.hold.set()
        assert await held == 10
        answers = await asyncio.gather(*failing, return_exceptions=True)
        assert all(isinstance(a, psycopg.OperationalError) for a in answers)
        assert await batches.ask(3) == 30

    asyncio.run(scenario())


def test_a_bad_knock_fails_alone_and_the_others_of_its_batch_are_read() -> None:
    reader = Reader()

    async def scenario() -> list[object]:
        batches = reads_together(reader)
        held = await reader.busy_with(batches, 1)
        asked = [asyncio.ensure_future(batches.ask(n)) for n in (2, -2, 3)]
        await asyncio.sleep(0.05)
        reader.hold.set()
        assert await held == 10
        return await asyncio.gather(*asked, return_exceptions=True)

    two, bad, three = asyncio.run(scenario())
    assert (two, three) == (20, 30) and isinstance(bad, ValueError)
    assert reader.batches == [[1], [2, -2, 3], [2], [-2], [3]]


def test_a_socket_that_left_while_it_waited_is_not_read() -> None:
    reader = Reader()

    async def scenario() -> None:
        batches = reads_together(reader)
        held = await reader.busy_with(batches, 1)
        gone = asyncio.ensure_future(batches.ask(2))
        stays = asyncio.ensure_future(batches.ask(3))
        await asyncio.sleep(0.01)
        gone.cancel()  # its client hung up
        reader.hold.set()
        assert (await held, await stays) == (10, 30)

    asyncio.run(scenario())
    assert reader.batches == [[1], [3]]


@pytest.mark.django_db
def test_knocks_admitted_together_each_get_their_own_answer(match_day, no_second_factor) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from safeground.matches.kept import fixtures_forget
    from tests import factories

    cast, fixture = match_day.cast, match_day.cup_tie

    def session(name: str) -> str:
        return str(factories.logged_in(cast[name]).cookies["sessionid"].value)

    outsider = factories.member(factories.organisation(name="Elsewhere FC"), "control_operator")
    knocks = [
        Knock(session("loggist"), fixture.pk),
        Knock(session("spotter"), fixture.pk),  # the police, through the fixture's share
        Knock(None, fixture.pk),
        Knock(session("steward"), 999_999),
        Knock(str(factories.logged_in(outsider).cookies["sessionid"].value), fixture.pk),
        Knock(session("steward"), fixture.pk),
    ]
    fixtures_forget()
    with CaptureQueriesContext(connection) as queries:
        together = admit_many(knocks)
    alone = [admit(session_key=k.session_key, fixture_id=k.fixture_id) for k in knocks]
    assert together == alone
    assert [a if isinstance(a, int) else type(a) for a in together] == [
        Viewer,
        Viewer,
        CLOSE_NOT_LOGGED_IN,
        CLOSE_NO_FIXTURE,
        CLOSE_FORBIDDEN,
        Viewer,
    ]
    assert together[1].roles == {"police_spotter"} and not together[1].home_staff  # type: ignore[union-attr]
    # Sessions, users, memberships; each fixture with its shares (two each, the missing one
    # one); the stewards' posts: however many knock.
    assert len(queries) <= 7, [q["sql"][:90] for q in queries]
