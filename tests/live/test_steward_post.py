"""A steward's socket carries the reports of the zones of their post, and not the others."""

import asyncio

import pytest

from safeground.accounts.models import User
from safeground.incidents.posts import steward_post_assign
from safeground.incidents.services import Place, log_entry_append

from .conftest import next_frame, no_frame

pytestmark = pytest.mark.django_db(transaction=True)


def report(fixture, block: str, text: str) -> None:
    log_entry_append(
        fixture=fixture,
        author=User.objects.get(username="loggist"),
        category="missile",
        text=text,
        place=Place(block=block),
    )


def test_a_posted_steward_gets_their_zones_reports_only(match_day, session_of, open_socket):
    cup_tie = match_day.cup_tie
    steward_post_assign(
        fixture=cup_tie,
        steward=User.objects.get(username="steward"),
        assigned_by=User.objects.get(username="safety"),
        zone="away-south-cup",
    )
    session = session_of("steward")

    async def scenario() -> list[str]:
        async with open_socket(cup_tie.pk, session, after=0) as ws:
            assert (await next_frame(ws))["type"] == "hello"
            await asyncio.to_thread(report, cup_tie, "N-L3", "Far away: north stand")
            await asyncio.to_thread(report, cup_tie, "S-L2", "In the away section")
            frame = await next_frame(ws)
            await no_frame(ws)
            return [frame["data"]["entry"]["text"]]

    assert asyncio.run(scenario()) == ["In the away section"]


def test_the_assignee_hears_of_every_later_action_on_their_task(match_day, session_of, open_socket):
    cup_tie = match_day.cup_tie
    from safeground.incidents.services import log_entry_assign, log_entry_set_status

    loggist, steward = User.objects.get(username="loggist"), User.objects.get(username="steward")
    task = log_entry_append(
        fixture=cup_tie,
        author=loggist,
        category="medical",
        text="Fan fainted in N-L1",
        place=Place(block="N-L1"),
    )
    session = session_of("steward")  # not posted: only what is addressed to them reaches them

    def assign_then_resolve() -> None:
        log_entry_assign(entry=task, author=loggist, assignee=steward)
        log_entry_set_status(entry=task, author=loggist, status="resolved")

    async def scenario() -> list[str]:
        async with open_socket(cup_tie.pk, session, after=0) as ws:
            assert (await next_frame(ws))["type"] == "hello"
            await asyncio.to_thread(assign_then_resolve)
            kinds = [(await next_frame(ws))["data"]["entry"]["kind"] for _ in range(2)]
            await no_frame(ws)
            return kinds

    assert asyncio.run(scenario()) == ["assignment", "status"]

    async def reconnect() -> list[str]:  # catch-up addresses them the same way
        async with open_socket(cup_tie.pk, session, after=0) as ws:
            await next_frame(ws)
            kinds = [(await next_frame(ws))["data"]["entry"]["kind"] for _ in range(2)]
            await no_frame(ws)
            return kinds

    assert asyncio.run(reconnect()) == ["assignment", "status"]
