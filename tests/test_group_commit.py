"""The group commit's one policy (safeground.group_commit), in both flavours: a batch holds at most
`limit` items and each key once, one bad item fails only itself while the others are written, a
failure of the connection fails the batch at once, and each caller gets its own result or
exception."""

import asyncio
import threading
from collections.abc import Callable, Sequence

import psycopg
import pytest
from django.db import OperationalError

from safeground.group_commit import OnLoop, OnThread, Policy, connection_failed


class Writer:
    """A write that records each batch, can be held so that items pile up behind it, and fails
    as its items say: -1 the connection's failure, -2 a refusal of the batch, -3 that item
    refused (an Exception as its result)."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.threads: set[str] = set()
        self.hold = threading.Event()
        self.hold.set()
        self.started = threading.Event()

    def __call__(self, items: Sequence[int]) -> list[int | Exception]:
        self.batches.append(list(items))
        self.threads.add(threading.current_thread().name)
        self.started.set()
        self.hold.wait(5)
        if -1 in items:
            raise psycopg.OperationalError("server closed the connection unexpectedly")
        if -2 in items:
            raise ValueError("an item the batch cannot take")
        return [ValueError("refused") if item == -3 else item * 10 for item in items]


def on_loop(writer: Writer, policy: Policy[int]) -> OnLoop[int, int]:
    async def write(items: list[int]) -> list[int | Exception]:
        return await asyncio.to_thread(writer, items)

    return OnLoop(write, policy)


def on_thread(writer: Writer, policy: Policy[int]) -> OnThread[int, int]:
    return OnThread(writer, policy, name="test")


def behind_a_held_batch(
    flavour: Callable[[Writer, Policy[int]], OnLoop[int, int] | OnThread[int, int]],
    policy: Policy[int],
    items: list[int],
) -> tuple[Writer, list[object]]:
    """Item 0 written first and held there while `items` arrive; what each caller got."""
    writer = Writer()
    commit = flavour(writer, policy)
    writer.hold.clear()

    if isinstance(commit, OnLoop):
        loop_commit = commit

        async def scenario() -> list[object]:
            first = asyncio.ensure_future(loop_commit.ask(0))
            await asyncio.to_thread(writer.started.wait, 5)
            rest = [asyncio.ensure_future(loop_commit.ask(item)) for item in items]
            await asyncio.sleep(0.02)
            writer.hold.set()
            assert await first == 0
            return list(await asyncio.gather(*rest, return_exceptions=True))

        return writer, asyncio.run(scenario())

    first = commit.submit(0)
    writer.started.wait(5)
    rest = [commit.submit(item) for item in items]
    writer.hold.set()
    assert first.result(5) == 0
    answers: list[object] = []
    for future in rest:
        try:
            answers.append(future.result(5))
        except Exception as error:
            answers.append(error)
    assert commit.settle(5)
    return writer, answers


FLAVOURS = [pytest.param(on_loop, id="asyncio"), pytest.param(on_thread, id="thread")]


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_items_arriving_meanwhile_go_together_up_to_the_limit(flavour) -> None:
    writer, answers = behind_a_held_batch(flavour, Policy(limit=3), list(range(1, 8)))
    assert answers == [n * 10 for n in range(1, 8)]
    assert writer.batches == [[0], [1, 2, 3], [4, 5, 6], [7]]


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_key_goes_once_in_a_batch_and_its_second_item_in_the_next(flavour) -> None:
    policy = Policy(limit=10, keys=lambda item: (item % 100,))
    writer, answers = behind_a_held_batch(flavour, policy, [1, 2, 101, 3, 201])
    assert answers == [10, 20, 1010, 30, 2010]
    assert writer.batches == [[0], [1, 2, 3], [101], [201]]


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_one_bad_item_fails_alone_and_the_others_are_written(flavour) -> None:
    writer, answers = behind_a_held_batch(flavour, Policy(limit=10), [1, -2, 3])
    assert answers[0] == 10 and answers[2] == 30
    assert isinstance(answers[1], ValueError)
    assert writer.batches == [[0], [1, -2, 3], [1], [-2], [3]]


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_the_connection_failing_fails_the_batch_at_once(flavour) -> None:
    writer, answers = behind_a_held_batch(flavour, Policy(limit=10), [1, -1, 3])
    assert all(isinstance(answer, psycopg.OperationalError) for answer in answers)
    assert writer.batches == [[0], [1, -1, 3]]  # not again one by one: each would fail too


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_an_item_refused_raises_to_its_caller_alone(flavour) -> None:
    writer, answers = behind_a_held_batch(flavour, Policy(limit=10), [1, -3, 3])
    assert answers[0] == 10 and answers[2] == 30
    assert isinstance(answers[1], ValueError) and str(answers[1]) == "refused"
    assert writer.batches == [[0], [1, -3, 3]]  # refused within the batch: not written again


def test_a_caller_gone_from_the_loop_is_left_out() -> None:
    writer = Writer()
    commit = on_loop(writer, Policy(limit=10))

    async def scenario() -> tuple[int, int]:
        writer.hold.clear()
        held = asyncio.ensure_future(commit.ask(1))
        await asyncio.to_thread(writer.started.wait, 5)
        gone = commit.submit(2)
        stays = commit.submit(3)
        gone.cancel()  # its client hung up, or its deadline passed
        writer.hold.set()
        return await held, await stays

    assert asyncio.run(scenario()) == (10, 30)
    assert writer.batches == [[1], [3]]


def test_a_thread_writes_its_own_job_and_the_loops_go_to_the_named_writer_thread() -> None:
    writer = Writer()
    commit = on_thread(writer, Policy(limit=10))
    assert commit.ask(1) == 10  # nobody writing: written by the asking thread, no hand-off
    assert writer.threads == {threading.current_thread().name}
    assert commit.alone(2) == 20
    with pytest.raises(ValueError, match="refused"):
        commit.alone(-3)
    assert asyncio.run(commit.ask_async(3)) == 30
    assert writer.threads == {threading.current_thread().name, "group-commit-test"}


def test_threads_arriving_while_one_writes_go_together_and_each_gets_its_own() -> None:
    writer = Writer()
    commit = on_thread(writer, Policy(limit=10))
    writer.hold.clear()
    answers: dict[int, object] = {}

    def send(item: int) -> None:
        try:
            answers[item] = commit.ask(item)
        except ValueError as error:
            answers[item] = error

    first = threading.Thread(target=send, args=(0,))
    first.start()
    writer.started.wait(5)
    rest = [threading.Thread(target=send, args=(item,)) for item in (1, -3, -2, 4)]
    for thread in rest:
        thread.start()
    while len(commit._waiting) < 4:
        threading.Event().wait(0.01)
    writer.hold.set()
    for thread in [first, *rest]:
        thread.join(5)
    assert (answers[0], answers[1], answers[4]) == (0, 10, 40)
    assert isinstance(answers[-3], ValueError) and isinstance(answers[-2], ValueError)
    assert writer.batches[0] == [0] and sorted(writer.batches[1]) == [-3, -2, 1, 4]
    assert sorted(map(tuple, writer.batches[2:])) == [(-3,), (-2,), (1,), (4,)]


def test_a_caller_on_the_loop_awaits_the_writer_thread() -> None:
    writer = Writer()
    commit = on_thread(writer, Policy(limit=10))

    async def scenario() -> list[object]:
        return await asyncio.gather(
            *(commit.ask_async(item) for item in (1, -3, 2)), return_exceptions=True
        )

    one, refused, two = asyncio.run(scenario())
    assert (one, two) == (10, 20) and isinstance(refused, ValueError)


def test_the_connections_failure_is_told_from_an_items() -> None:
    closed = psycopg.OperationalError("server closed the connection unexpectedly")
    refused = psycopg.errors.ForeignKeyViolation("insert violates a foreign key")
    assert connection_failed(closed) and connection_failed(TimeoutError())
    assert not connection_failed(refused) and not connection_failed(ValueError())
    wrapped = OperationalError("server closed the connection unexpectedly")
    wrapped.__cause__ = closed  # as Django wraps the driver's error
    assert connection_failed(wrapped)
