"""The fan-out benches' cheap viewers (bench/viewers.py): what decides lost and doubled, and the
frame reading against a real `websockets` server."""

from __future__ import annotations

import asyncio

from bench import viewers


def test_a_mark_is_found_only_whole() -> None:
    frame = b'{"type": "log.entry", "data": {"text": "bench-42- coin thrown"}}'
    assert viewers.mark_in(frame, 0, len(frame)) == 42
    assert viewers.mark_in(b"bench-42", 0, 8) is None  # cut before its closing "-"
    assert viewers.mark_in(b"bench--", 0, 7) is None
    assert viewers.mark_in(frame, 0, 20) is None  # outside the frame's bounds


def test_a_mark_seen_twice_on_a_socket_is_a_duplicate_not_a_second_receipt() -> None:
    tally = viewers.Tally()
    one: set[int] = set()
    other: set[int] = set()
    tally.got(one, 1, 10.0)
    tally.got(one, 1, 10.5)
    tally.got(other, 1, 10.2)
    assert list(tally.ids) == [1, 1]
    assert list(tally.times) == [10.0, 10.2]
    assert tally.duplicates == 1


def test_counting_names_each_socket_that_missed_a_mark() -> None:
    sent = {1: 0.0, 2: 1.0, 3: 2.0}
    # two processes' results: three sockets in all; mark 2 reached two of them, mark 3 none
    first = ([1, 2, 1], [0.5, 1.25, 0.75], 1, 0, 600)
    second = ([1, 2, 99], [0.25, 1.5, 5.0], 0, 0, 600)
    counted = viewers.count_viewers([first, second], sent, sockets=3)
    assert sorted(counted.delays_s) == [0.25, 0.25, 0.5, 0.5, 0.75]
    assert counted.missed == 1 + 3  # mark 2 on one socket, mark 3 on all three
    assert counted.twice == 1
    only_answered = viewers.count_viewers([first, second], sent, sockets=3, expected=[1, 2])
    assert only_answered.missed == 1


def test_viewers_read_a_real_servers_frames_and_answer_its_pings() -> None:
    from websockets.asyncio.server import broadcast, serve

    async def scenario() -> tuple[viewers.Tally, int, bool]:
        connected: set = set()
        pongs: list[bool] = []

        async def handler(ws) -> None:  # type: ignore[no-untyped-def]
            connected.add(ws)
            await ws.send('{"type": "hello"}')
            await ws.wait_closed()

        async with serve(handler, "127.0.0.1", 0, compression=None) as server:
            port = server.sockets[0].getsockname()[1]
            tally = viewers.Tally()
            opened = await viewers.open_viewers(
                f"ws://127.0.0.1:{port}/ws/", "http://127.0.0.1", "", 3, tally
            )
            while len(connected) < 3:
                await asyncio.sleep(0.01)
            long_text = "x" * 70_000  # a 64-bit length
            broadcast(connected, '{"data": {"text": "bench-1- short"}}')
            broadcast(connected, '{"data": {"text": "bench-2- ' + "y" * 300 + '"}}')  # 16-bit
            broadcast(connected, '{"data": {"text": "bench-3- ' + long_text + '"}}')
            broadcast(connected, '{"data": {"text": "bench-1- again"}}')
            broadcast(connected, '{"type": "pong"}')  # no mark: not counted
            for ws in list(connected):
                await asyncio.wait_for(await ws.ping(), 5)
                pongs.append(True)
            while len(tally.ids) < 9 or tally.duplicates < 3:
                await asyncio.sleep(0.01)
            return tally, len(opened), all(pongs) and len(pongs) == 3

    tally, opened, ponged = asyncio.run(asyncio.wait_for(scenario(), 20))
    assert opened == 3
    assert ponged
    assert sorted(tally.ids) == [1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert tally.duplicates == 3
    assert tally.frame_len > 70_000
