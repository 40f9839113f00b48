"""League ban exchange benchmark: a 60,000-holder fixture checked against the bans 92 clubs
publish (about 2,000), obliviously (docs/adr/0015-league-ban-exchange.md).

Publishing is set-up: each banned person's identities (date of birth as given and swapped) are
blinded, evaluated with the exchange's VOPRF key and unblinded into the published set. The timed
check is what `exchange/checking.py` does with the crypto: every holder's identity folded
(exchange/tokens.py), blinded, evaluated by the exchange in batches of 4,096 with a batch proof,
unblinded with the proof checked, and compared with the published set. The exchange's side runs
in the same worker processes as the club's here (no network): `--processes` workers (2, this
machine's cores) each carry a share of the batches. 60 holders are planted as variants of banned
people (accents dropped, words reordered, day and month swapped).

The peer, in the same run: a plain exact-hash lookup of the same data (SHA-256 of the same folded
identity against a set of the bans'), which is what "hashing the list" would cost, and which
anyone holding the hashes could reverse by guessing.

    .venv/bin/python bench/bench_exchange.py            # or: make bench-exchange

Last line: `exchange clubs=N bans=B holders=H seconds=S plain_seconds=P matched=M` (target S <= 10).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import resource
import sys
import time
import unicodedata
from concurrent.futures import ProcessPoolExecutor
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from django.conf import settings  # noqa: E402

settings.configure(SECRET_KEY="bench-exchange", SAFEGROUND_EXCHANGE_OPRF_SEED="")

from safeground.exchange import oprf, tokens  # noqa: E402

FIRST = ["Seán", "Ciarán", "Zoë", "Anaïs", "Rowan", "Ellis", "Jules", "Casey", "Morgan", "Avery"]
LAST = ["Ó Vantwíck", "Orbenshaw", "Quellmoor", "Darrowfen", "Eskerby", "Pollendine", "Mac Tíre"]


def person(rng: random.Random, n: int) -> tuple[str, date]:
    name = f"{rng.choice(FIRST)} {rng.choice(LAST)}{n}"
    return name, date(1960, 1, 1) + timedelta(days=rng.randrange(16000))


def variant(name: str) -> str:
    """The name as another club's ticketing system might hold it: accents gone, words turned."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
    first, *rest = plain.split()
    return " ".join([*rest, first]).upper()


def evaluated(inputs: list[bytes]) -> list[bytes]:
    """Blind, evaluate (the exchange's call), unblind with the proof checked, batch by batch."""
    found: list[bytes] = []
    key = oprf.public_key()
    for start in range(0, len(inputs), oprf.BATCH):
        clients, blinded = oprf.blind(inputs[start : start + oprf.BATCH])
        found += oprf.finalize(clients, oprf.evaluate(blinded), key)
    return found


def _cpu_seconds() -> float:
    own, children = (
        resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clubs", type=int, default=92)
    parser.add_argument("--bans-per-club", type=int, default=22)
    parser.add_argument("--holders", type=int, default=60_000)
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args()
    rng = random.Random(30)
    banned = [person(rng, n) for n in range(args.clubs * args.bans_per_club)]
    started = time.perf_counter()
    ban_inputs = [i for name, born in banned for i in tokens.banned_inputs(name, born)]
    published = set(evaluated(ban_inputs))
    print(f"published {len(banned)} bans as {len(published)} tokens in "
          f"{time.perf_counter() - started:.1f} s (set-up)")  # fmt: skip

    holders = [person(rng, 10_000 + n) for n in range(args.holders)]
    for slot, (name, born) in zip(rng.sample(range(args.holders), 60), banned, strict=False):
        holders[slot] = (variant(name), born if born.day > 12 else born.replace(
            month=born.day, day=born.month) if born.day != born.month else born)  # fmt: skip

    started = time.perf_counter()
    cpu_before = _cpu_seconds()
    inputs = [tokens.holder_input(name, born) for name, born in holders]
    share = -(-len(inputs) // args.processes)
    share = -(-share // oprf.BATCH) * oprf.BATCH
    parts = [inputs[i : i + share] for i in range(0, len(inputs), share)]
    with ProcessPoolExecutor(args.processes) as pool:
        made = [t for part in pool.map(evaluated, parts) for t in part]
    matched = sum(1 for t in made if t in published)
    seconds = time.perf_counter() - started
    cpu = _cpu_seconds() - cpu_before

    started = time.perf_counter()
    plain_bans = {hashlib.sha256(i).digest() for i in ban_inputs}
    plain = sum(
        1
        for name, born in holders
        if hashlib.sha256(tokens.holder_input(name, born)).digest() in plain_bans
    )
    plain_seconds = time.perf_counter() - started
    assert plain == matched, f"the plain lookup found {plain}, the oblivious one {matched}"
    # On a shared machine the wall time is the CPU time's share: both are said.
    print(f"check: {cpu:.1f} CPU seconds in all processes; load average {os.getloadavg()[0]:.1f}")
    print(
        f"exchange clubs={args.clubs} bans={len(banned)} holders={args.holders} "
        f"seconds={seconds:.2f} plain_seconds={plain_seconds:.2f} matched={matched}"
    )


if __name__ == "__main__":
    main()
