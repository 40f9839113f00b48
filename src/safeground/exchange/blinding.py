"""A club's side of the OPRF spread over processes (docs/adr/0015, Update): the blinding and the
unblinding with its proof check are nearly all the cost of a check, in voprf's native code,
which holds the GIL, so threads do not help. Each worker process blinds its share of the
batches and keeps their blinding scalars (they never leave it, and cannot be pickled); this
process sends each blinded batch to the exchange as soon as it is ready and hands the answer
back to the worker that holds its scalars. Nothing here touches the database or Django.
"""

import multiprocessing
import queue
import time
from collections.abc import Callable
from multiprocessing.queues import Queue
from typing import Any

from voprf import ristretto

from . import oprf

# A worker that says nothing for this long is taken to have died.
WORKER_SILENCE_SECONDS = 300


def evaluated(
    inputs: list[bytes],
    evaluate: Callable[[list[bytes]], bytes],
    key: bytes,
    *,
    processes: int = 2,
    batch: int = oprf.BATCH,
) -> list[bytes]:
    """Each input's OPRF output, in order: blinded, `evaluate`d (the exchange's call, a batch of
    blinded elements to its evaluated batch with proof), unblinded with the proof checked
    against `key`. One batch, or one process, is done here without starting any."""
    batches = [inputs[start : start + batch] for start in range(0, len(inputs), batch)]
    if processes < 2 or len(batches) < 2:
        found: list[bytes] = []
        for part in batches:
            clients, blinded = oprf.blind(part)
            found += oprf.finalize(clients, evaluate(blinded), key)
        return found
    return _in_processes(batches, evaluate, key, min(processes, len(batches)))


def _in_processes(
    batches: list[list[bytes]], evaluate: Callable[[list[bytes]], bytes], key: bytes, count: int
) -> list[bytes]:
    # spawn, not fork: the web server's threads and database connections stay out of workers.
    context = multiprocessing.get_context("spawn")
    replies: Queue[Any] = context.Queue()
    requests: list[Queue[Any]] = [context.Queue() for _ in range(count)]
    workers = [context.Process(target=_work, args=(own, replies), daemon=True) for own in requests]
    for worker in workers:
        worker.start()
    try:
        for number, part in enumerate(batches):
            requests[number % count].put(("blind", number, part))
        done: dict[int, list[bytes]] = {}
        while len(done) < len(batches):
            kind, number, payload = _reply(replies, workers)
            if kind == "refused":
                raise oprf.OprfRefused(payload)
            if kind == "blinded":
                requests[number % count].put(("finalize", number, (evaluate(payload), key)))
            else:
                done[number] = payload
    finally:
        for own in requests:
            own.put(None)
        for worker in workers:
            worker.join(timeout=5)
            if worker.is_alive():
                worker.kill()
    return [token for number in range(len(batches)) for token in done[number]]


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
