"""Sockets admitted while the log grows: no screen gets an entry twice or out of order (issue 25).

A socket joins the hub, then reads its catch-up on a pool thread while entries keep committing
and their frames keep arriving; the catch-up, the frames held back meanwhile and those after
must add up to each seq once, in order, with none missed. Two writers append at once, so frames
also reach the hub out of order; sockets come and go in waves, so the hub's order of a match
starts afresh between them.
"""

import asyncio
import json
import random
import threading
import time

import pytest
from django.db import connections, transaction
from websockets.exceptions import ConnectionClosed

from safeground.accounts.models import User

pytestmark = pytest.mark.django_db(transaction=True)

WRITERS = 2
WAVES = 12
SOCKETS_PER_WAVE = 30  # 360 admissions in all
LISTEN_S = 0.6  # each socket's life after its hello
PUBLISH_DELAY_S = 0.03  # at most, between a commit and its publish


def test_sockets_admitted_while_entries_commit_get_each_seq_once_in_order(
    match_day, session_of, open_socket, settings
):
    cup_tie = match_day.cup_tie
    from safeground.incidents.selectors import shown_entries
    from safeground.incidents.services import Place, log_entry_append

    settings.SAFEGROUND_LIVE_FIXTURE_CACHE_SECONDS = 5.0  # as served: the fold is kept
    loggist = User.objects.get(username="loggist")  # the control room: sees every entry
    session = session_of("loggist")
    stop = threading.Event()
    failures: list[BaseException] = []

    def write(writer: int) -> None:
        try:
            count = 0
            while not stop.is_set():
                with transaction.atomic():
                    # The writer is slowed between its commit and its publish (as a process on
                    # another core, or paused by its collector, is): the other writer's next
                    # entry may reach the hub first, and a socket's catch-up may read the entry
                    # before its frame comes.
                    pause = random.random() * PUBLISH_DELAY_S
                    transaction.on_commit(lambda pause=pause: time.sleep(pause))
                    log_entry_append(
                        fixture=cup_tie,
                        author=loggist,
                        category="missile",
                        text=f"writer {writer} entry {count}",
                        place=Place(block="S-L1"),
                    )
                count += 1
        except BaseException as error:  # the test fails on it, below
            failures.append(error)
        finally:
            connections.close_all()

    def last_seq() -> int:
        try:
            return (
                shown_entries(cup_tie).order_by("-seq").values_list("seq", flat=True).first() or 0
            )
        finally:
            connections.close_all()

    async def one_socket(after: int) -> tuple[int, list[int], bool]:
        """(after, the seqs it received in order, whether the server closed it)."""
        seqs: list[int] = []
        async with open_socket(cup_tie.pk, session, after=after) as ws:
            try:
                assert json.loads(await ws.recv())["type"] == "hello"
                deadline = time.monotonic() + LISTEN_S
                while (left := deadline - time.monotonic()) > 0:
                    try:
                        frame = json.loads(await asyncio.wait_for(ws.recv(), left))
                    except TimeoutError:
                        break
                    if frame["seq"] is not None:
                        seqs.append(frame["seq"])
            except ConnectionClosed:
                return after, seqs, True
        return after, seqs, False

    async def scenario() -> list[tuple[int, list[int], bool]]:
        results = []
        for _ in range(WAVES):
            newest = await asyncio.to_thread(last_seq)
            # some come back a little behind (a catch-up), some with nothing missed
            afters = [max(0, newest - random.randint(0, 4)) for _ in range(SOCKETS_PER_WAVE)]
            results += await asyncio.gather(*(one_socket(after) for after in afters))
        return results

    writers = [threading.Thread(target=write, args=(w,)) for w in range(WRITERS)]
    for thread in writers:
        thread.start()
    try:
        results = asyncio.run(scenario())
    finally:
        stop.set()
        for thread in writers:
            thread.join()
    assert not failures, failures

    log = list(shown_entries(cup_tie).values_list("seq", flat=True))
    twice = [(after, seqs) for after, seqs, _ in results if len(set(seqs)) != len(seqs)]
    disordered = [(after, seqs) for after, seqs, _ in results if seqs != sorted(seqs)]
    early = [(after, seqs) for after, seqs, _ in results if seqs and seqs[0] <= after]
    # Between its first and last frame a socket that stayed open missed no entry of the log.
    missed = [
        (after, seqs)
        for after, seqs, closed in results
        if seqs and not closed and sorted(set(seqs)) != [s for s in log if after < s <= max(seqs)]
    ]
    assert len(results) == WAVES * SOCKETS_PER_WAVE
    assert sum(1 for _, seqs, _ in results if seqs) > len(results) // 2  # the writers kept up
    assert not twice, f"{len(twice)} sockets got a seq twice, e.g. {twice[:2]}"
    assert not disordered, f"{len(disordered)} sockets got seqs out of order, e.g. {disordered[:2]}"
    assert not early, f"{len(early)} sockets got a seq at or before `after`, e.g. {early[:2]}"
    assert not missed, f"{len(missed)} sockets missed an entry, e.g. {missed[:2]}"
