"""League ban exchange benchmark: a 60,000-holder fixture checked against the bans 92 clubs
publish (about 2,000), obliviously (docs/adr/0015-league-ban-exchange.md).

Publishing is set-up: each banned person's two identities (date of birth as given and swapped,
or a filler when it cannot be swapped: every ban has two tokens) are blinded, evaluated with the
exchange's VOPRF key and unblinded into the published set. The timed check is the club's own
code (`exchange/checking.holder_tokens`) on a SQLite database of its own: a batch at a time, as
the workers ask for one, every holder's identity folded (exchange/tokens.py) and looked up in
the club's cache of tokens (none the first time); the rest blinded and unblinded with the proof
checked in `--processes` worker processes (exchange/blinding.py), evaluated by the exchange in
batches of 2,048 (`--batch`) with a batch proof (here in this process, no network: the
evaluation's CPU counts on the same two cores), cached as each batch comes back, and compared
with the published set. 60 holders are planted as variants of banned people (accents dropped,
words reordered, day and month swapped).

Two checks are timed: the fixture's first (every holder new to the cache: the last line), and
its next after `--new` more tickets are sold (the rest are taken from the cache, the new ones
evaluated: the `next check` line).

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
import tempfile
import time
import unicodedata
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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


def _cpu_seconds() -> float:
    own, children = (
        resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def check(
    holders: list[tuple[str, date]], published: set[str], batch: int
) -> tuple[int, float, float]:
    """The club's check of these holders: (matched, seconds, CPU seconds in all processes)."""
    from safeground.exchange import checking, oprf

    started, cpu_before = time.perf_counter(), _cpu_seconds()
    made = checking.holder_tokens(holders, oprf.public_key(), oprf.evaluate, batch=batch)
    matched = sum(1 for token in made if token in published)
    return matched, time.perf_counter() - started, _cpu_seconds() - cpu_before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clubs", type=int, default=92)
    parser.add_argument("--bans-per-club", type=int, default=22)
    parser.add_argument("--holders", type=int, default=60_000)
    parser.add_argument("--new", type=int, default=6_000, help="tickets sold before the next")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--batch", type=int, default=None, help="holders a batch (the default)")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="bench-exchange-")
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir}/club.sqlite3"
    os.environ["DJANGO_SETTINGS_MODULE"] = "safeground.settings.dev"
    os.environ["SAFEGROUND_EXCHANGE_PROCESSES"] = str(args.processes)
    sys.path.insert(0, str(ROOT / "src"))
    import django

    django.setup()
    from django.core.management import call_command

    from safeground.exchange import blinding, checking, oprf, tokens

    call_command("migrate", verbosity=0)
    rng = random.Random(30)
    banned = [person(rng, n) for n in range(args.clubs * args.bans_per_club)]
    started = time.perf_counter()
    ban_inputs = [
        i for name, born in banned for i in tokens.banned_inputs(name, born, filler_key=b"bench")
    ]
    made = blinding.evaluated(ban_inputs, oprf.evaluate, oprf.public_key(), processes=1)
    published = {token.hex() for token in made}
    print(f"published {len(banned)} bans as {len(published)} tokens in "
          f"{time.perf_counter() - started:.1f} s (set-up)")  # fmt: skip

    holders = [person(rng, 10_000 + n) for n in range(args.holders)]
    for slot, (name, born) in zip(rng.sample(range(args.holders), 60), banned, strict=False):
        holders[slot] = (variant(name), born if born.day > 12 else born.replace(
            month=born.day, day=born.month) if born.day != born.month else born)  # fmt: skip

    batch = args.batch or checking.CHECK_BATCH
    matched, seconds, cpu = check(holders, published, batch)
    load = os.getloadavg()[0]
    sold = [person(rng, 500_000 + n) for n in range(args.new)]
    again, next_seconds, next_cpu = check(holders[args.new :] + sold, published, batch)

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
    print(f"next check ({args.new} holders new, the rest cached): seconds={next_seconds:.2f} "
          f"({next_cpu:.1f} CPU seconds) matched={again}")  # fmt: skip
    print(f"first check: {cpu:.1f} CPU seconds in all processes; load average {load:.1f}")
    print(
        f"exchange clubs={args.clubs} bans={len(banned)} holders={args.holders} "
        f"seconds={seconds:.2f} plain_seconds={plain_seconds:.2f} matched={matched}"
    )


if __name__ == "__main__":
    main()
