"""A club's side of the OPRF spread over processes (docs/adr/0015, Update): the blinding and the
unblinding with its proof check are nearly all the cost of a check, in voprf's native code,
which holds the GIL, so threads do not help. Each worker process blinds its share of the
batches and keeps their blinding scalars (they never leave it, and cannot be pickled); this
process sends each blinded batch to the exchange as soon as it is ready and hands the answer
back to the worker that holds its scalars. Nothing here touches the database or Django.

The batches are taken from the caller one at a time, only when a worker is ready for more, and
each batch's outputs are handed back as soon as they are unblinded: the caller's own work
(folding names, its cache's reads and writes) runs while the workers blind, not before or after
them (docs/adr/0015, second Update: measured, that serial work was a tenth of the check).
"""

import multiprocessing
import queue
import time
from collections.abc import Callable, Iterable, Iterator
from multiprocessing.queues import Queue
from typing import Any

from voprf import ristretto

from . import oprf

# A worker that says nothing for this long is taken to have died.
WORKER_SILENCE_SECONDS = 300
# Batches handed to a worker before it has blinded the last: one to work on and one waiting, so
# it never idles while this process evaluates, and the unblinding is not queued behind all the
# blinding (which would leave one core idle at the end while the other unblinds the rest).
AHEAD = 2

Evaluate = Callable[[list[bytes]], bytes]


def evaluated(
    inputs: list[bytes], evaluate: Evaluate, key: bytes, *, processes: int = 2,
    batch: int = oprf.BATCH,
) -> list[bytes]:  # fmt: skip
    """Each input's OPRF output, in order: blinded, `evaluate`d (the exchange's call, a batch of
    blinded elements to its evaluated batch with proof), unblinded with the proof checked
    against `key`. One batch, or one process, is done here without starting any."""
    parts = [inputs[start : start + batch] for start in range(0, len(inputs), batch)]
    if len(parts) < 2:
        processes = 1
    done = dict(stream(parts, evaluate, key, processes=processes))
    return [token for number in range(len(parts)) for token in done[number]]


def stream(
    parts: Iterable[list[bytes]], evaluate: Evaluate, key: bytes, *, processes: int = 2
) -> Iterator[tuple[int, list[bytes]]]:
    """Each batch's outputs as (its number in the order `parts` gave it, its outputs), as soon
    as they are unblinded; not in order. With fewer than two processes all is done here; else
    the workers start when the first batch comes (none when there is nothing to evaluate)."""
    taken = iter(parts)
    if processes < 2:
        for number, part in enumerate(taken):
            clients, blinded = oprf.blind(part)
            yield number, oprf.finalize(clients, evaluate(blinded), key)
        return
    first = next(taken, None)
    if first is None:
        return
    yield from _in_processes(first, taken, evaluate, key, processes)


def _in_processes(
    first: list[bytes], parts: Iterator[list[bytes]], evaluate: Evaluate, key: bytes, count: int
) -> Iterator[tuple[int, list[bytes]]]:
    # spawn, not fork: the web server's threads and database connections stay out of workers.
    context = multiprocessing.get_context("spawn")
    replies: Queue[Any] = context.Queue()
    requests: list[Queue[Any]] = [context.Queue() for _ in range(count)]
    workers = [context.Process(target=_work, args=(own, replies), daemon=True) for own in requests]
    for worker in workers:
        worker.start()
    owner: dict[int, int] = {}  # batch number -> the worker holding its scalars
    unblinded = [0] * count  # batches handed to each worker and not yet blinded
    numbers = iter(range(1 << 62))
    pending: list[bytes] | None = first
    try:
        while True:
            # Hand out batches while a worker has room; the caller makes each as it is taken.
            while pending is not None and min(unblinded) < AHEAD:
                number, least = next(numbers), unblinded.index(min(unblinded))
                requests[least].put(("blind", number, pending))
                owner[number] = least
                unblinded[least] += 1
                pending = next(parts, None)
            if not owner:
                return
            kind, number, payload = _reply(replies, workers)
            if kind == "refused":
                raise oprf.OprfRefused(payload)
            if kind == "blinded":
                unblinded[owner[number]] -= 1
                requests[owner[number]].put(("finalize", number, (evaluate(payload), key)))
            else:
                del owner[number]
                yield number, payload
    finally:
        for own in requests:
            own.put(None)
        for worker in workers:
            worker.join(timeout=5)
            if worker.is_alive():
                worker.kill()


def _reply(replies: "Queue[Any]", workers: list[Any]) -> tuple[str, int, Any]:
    """The next worker's answer; a worker that died (or fell silent) is said, not waited for."""
    silent_until = time.monotonic() + WORKER_SILENCE_SECONDS
    while True:
        try:
            return replies.get(timeout=1)
        except queue.Empty:
            dead = [w.exitcode for w in workers if w.exitcode is not None]
            if dead or time.monotonic() > silent_until:
                raise RuntimeError(f"a blinding worker stopped (exit codes {dead})") from None


def _work(requests: "Queue[Any]", replies: "Queue[Any]") -> None:
    """A worker: blind a batch and keep its scalars; finalize it when its answer comes."""
    held: dict[int, list[ristretto.Client]] = {}
    while (job := requests.get()) is not None:
        kind, number, payload = job
        try:
            if kind == "blind":
                held[number], blinded = oprf.blind(payload)
                replies.put(("blinded", number, blinded))
            else:
                output, key = payload
                replies.put(("tokens", number, oprf.finalize(held.pop(number), output, key)))
        except oprf.OprfRefused as refused:
            replies.put(("refused", number, str(refused)))
