"""The live socket end to end: uvicorn serving safeground.asgi, a websockets client, the
factories' match day."""

import asyncio
from typing import Any

import pytest
from django_otp import DEVICE_ID_SESSION_KEY
from django_otp.plugins.otp_totp.models import TOTPDevice
from websockets.exceptions import ConnectionClosed, InvalidStatus

from safeground.accounts.models import User
from safeground.live.events import Audience, frame_json

from .conftest import log_entry_data, next_frame, no_frame, publish_committed

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_logged_in_user_gets_hello_then_each_committed_frame(match_day, session_of, open_socket):
    cup_tie = match_day.cup_tie
    session = session_of("loggist")

    async def scenario() -> None:
        async with open_socket(cup_tie.pk, session) as ws:
            hello = await next_frame(ws)
            assert hello["type"] == "hello" and hello["fixture"] == cup_tie.pk
            assert hello["seq"] is None and "server_time" in hello["data"]
            await asyncio.to_thread(publish_committed, cup_tie.pk, "flare", seq=1)
            assert await next_frame(ws) == {
                "type": "log.entry",
                "fixture": cup_tie.pk,
                "seq": 1,
                "data": log_entry_data(1, "flare"),
            }
            await ws.send('{"type": "ping"}')
            pong = await next_frame(ws)
            assert pong["type"] == "pong" and "server_time" in pong["data"]

    asyncio.run(scenario())


def refusal(open_socket: Any, fixture_id: int, session: str | None, **kwargs: Any) -> int:
    """The close code the server ends the socket with, before any frame."""

    async def scenario() -> int:
        async with open_socket(fixture_id, session, **kwargs) as ws:
            with pytest.raises(ConnectionClosed) as closed:
                await ws.recv()
            assert closed.value.rcvd is not None
            return closed.value.rcvd.code

    return asyncio.run(scenario())


def test_an_anonymous_socket_is_closed_with_4401(match_day, open_socket):
    cup_tie = match_day.cup_tie
    assert refusal(open_socket, cup_tie.pk, None) == 4401
    assert refusal(open_socket, cup_tie.pk, "not-a-session") == 4401


def test_the_away_liaison_is_refused_a_league_match(
    match_day, session_of, open_socket, no_second_factor
):
    cup_tie = match_day.cup_tie
    league_match = match_day.league_match
    session = session_of("liaison")
    assert refusal(open_socket, league_match.pk, session) == 4403
    assert refusal(open_socket, 999_999, session) == 4404

    async def cup_tie_accepts() -> str:
        async with open_socket(cup_tie.pk, session) as ws:
            return str((await next_frame(ws))["type"])

    assert asyncio.run(cup_tie_accepts()) == "hello"


def test_a_cross_site_page_is_refused_at_the_handshake(match_day, session_of, open_socket):
    cup_tie = match_day.cup_tie
    session = session_of("loggist")

    async def scenario() -> None:
        with pytest.raises(InvalidStatus) as refused:
            async with open_socket(cup_tie.pk, session, origin="https://evil.example"):
                pass
        assert refused.value.response.status_code == 403

    with override_allowed_hosts(["127.0.0.1"]):
        asyncio.run(scenario())


def override_allowed_hosts(hosts: list[str]) -> Any:
    from django.test import override_settings

    return override_settings(ALLOWED_HOSTS=hosts)


def test_a_privileged_user_needs_the_second_factor_on_the_socket_too(
    match_day, client_for, open_socket
):
    cup_tie = match_day.cup_tie
    client = client_for("safety")
    session = str(client.cookies["sessionid"].value)
    assert refusal(open_socket, cup_tie.pk, session) == 4401

    device = TOTPDevice.objects.create(user=User.objects.get(username="safety"), confirmed=True)
    stored = client.session
    stored[DEVICE_ID_SESSION_KEY] = device.persistent_id
    stored.save()

    async def accepted() -> str:
        async with open_socket(cup_tie.pk, session) as ws:
            return str((await next_frame(ws))["type"])

    assert asyncio.run(accepted()) == "hello"


def test_a_steward_gets_what_is_addressed_to_them_not_another_zones_events(
    match_day, session_of, open_socket
):
    cup_tie = match_day.cup_tie
    steward_session, loggist_session = session_of("steward"), session_of("loggist")
    steward_id = User.objects.get(username="steward").pk

    async def scenario() -> None:
        async with (
            open_socket(cup_tie.pk, steward_session) as steward,
            open_socket(cup_tie.pk, loggist_session) as loggist,
        ):
            await next_frame(steward)
            await next_frame(loggist)
            zone = Audience(zone_ids=frozenset({987_654}))
            await asyncio.to_thread(publish_committed, cup_tie.pk, "zone", audience=zone, seq=1)
            to_them = Audience(home_only=True, user_ids=frozenset({steward_id}))
            await asyncio.to_thread(publish_committed, cup_tie.pk, "task", audience=to_them, seq=2)
            texts = [(await next_frame(loggist))["data"]["entry"]["text"] for _ in range(2)]
            assert texts == ["zone", "task"]
            assert (await next_frame(steward))["data"]["entry"]["text"] == "task"
            await no_frame(steward)

    asyncio.run(scenario())


def test_catch_up_then_live_frames_with_nothing_missed_and_nothing_twice(
    match_day, session_of, open_socket, monkeypatch
):
    cup_tie = match_day.cup_tie
    """A frame committed while the catch-up query runs arrives once, after the catch-up."""
    fixture_id = cup_tie.pk

    def live_catch_up(*, fixture_id: int, wants: list[tuple[Any, int]]) -> list[list[Any]]:
        [(viewer, after_seq)] = wants
        assert after_seq == 1
        assert viewer.roles == {"control_operator"} and viewer.home_staff
        publish_committed(fixture_id, seq=3)  # committed as the query reads
        publish_committed(fixture_id, seq=4)
        return [
            [
                (s, frame_json(fixture_id=fixture_id, type="log.entry", data={}, seq=s))
                for s in (2, 3)
            ]
        ]

    # The catch-up provider is replaced so that frames commit while it runs, at a chosen moment.
    from safeground.live import providers

    session = session_of("loggist")

    async def scenario() -> None:
        async with open_socket(fixture_id, session, after=1) as ws:
            assert (await next_frame(ws))["type"] == "hello"
            assert [(await next_frame(ws))["seq"] for _ in range(3)] == [2, 3, 4]
            await no_frame(ws)
            await asyncio.to_thread(publish_committed, fixture_id, seq=5)
            assert (await next_frame(ws))["seq"] == 5

    with providers.catch_up_sources.replaced(live_catch_up):
        asyncio.run(scenario())


def test_a_reconnecting_socket_gets_only_the_entries_it_missed_each_once(
    match_day, session_of, open_socket, settings
):
    cup_tie = match_day.cup_tie
    """The real catch-up (the log folded once per process, extended as it grows): a socket that
    comes back with `after` gets the entries after it, in order, none twice, then live ones."""
    from safeground import background
    from safeground.incidents.selectors import shown_entries
    from safeground.incidents.services import Place, log_entry_append

    settings.SAFEGROUND_LIVE_FIXTURE_CACHE_SECONDS = 5.0  # as served: the fold is kept
    loggist = User.objects.get(username="loggist")
    session = session_of("loggist")

    def report(text: str) -> int:
        entry = log_entry_append(
            fixture=cup_tie,
            author=loggist,
            category="missile",
            text=text,
            place=Place(block="S-L1"),
        )
        assert background.settle()  # its flashpoint warning, if any, is in the log too
        return entry.seq

    first = [report(f"before {i}") for i in range(3)]

    async def seqs_after(after: int, then: str | None = None) -> list[int]:
        async with open_socket(cup_tie.pk, session, after=after) as ws:
            assert (await next_frame(ws))["type"] == "hello"
            got = []
            while True:
                try:
                    frame = await next_frame(ws, timeout=0.5)
                except TimeoutError:
                    break
                got.append(frame["seq"])
            if then is not None:  # a live entry after the catch-up comes once, after it
                live = await asyncio.to_thread(report, then)
                assert (await next_frame(ws))["seq"] == live
                await no_frame(ws)
            return got

    def shown_after(seq: int) -> list[int]:  # the log as it stands (warnings come in too)
        return list(shown_entries(cup_tie).filter(seq__gt=seq).values_list("seq", flat=True))

    assert asyncio.run(seqs_after(0)) == shown_after(0) and first[-1] in shown_after(0)
    before = shown_after(0)[-1]
    for i in range(2):
        report(f"while away {i}")
    missed = shown_after(before)
    assert len(missed) >= 2
    assert asyncio.run(seqs_after(before, then="live")) == missed
    latest = shown_after(0)[-1]
    assert asyncio.run(seqs_after(latest)) == []
    assert asyncio.run(seqs_after(first[0])) == shown_after(first[0])
