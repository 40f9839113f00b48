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

The point of sale (`single_p99_ms`): one new holder's ticket checked end to end with the
exchange in its own process, as in production: `safeground exchange` served by uvicorn on a
free port with its own SQLite database (the same published bans, 92 other clubs enrolled), the
club's own code (`exchange/checking.tickets_check`) over signed HTTP: the check declared, the
published set asked for (a 304 while it is unchanged), the holder blinded, evaluated by the
exchange with its proof, unblinded with the proof checked, compared, flagged, the outcome
reported. `--singles` checks (200) after `--warm-up` (20), each a new ticket's new holder;
every tenth a banned person's variant, which must match.

The peer, in the same run: a plain exact-hash lookup of the same data (SHA-256 of the same folded
identity against a set of the bans'), which is what "hashing the list" would cost, and which
anyone holding the hashes could reverse by guessing.

    .venv/bin/python bench/bench_exchange.py            # or: make bench-exchange

Last line: `exchange clubs=N bans=B holders=H seconds=S plain_seconds=P matched=M
single_p99_ms=Q` (target S <= 10; Q <= 100). `--singles 0` leaves the point of sale out.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import random
import resource
import socket
import subprocess
import sys
import tempfile
import time
import unicodedata
import urllib.request
from datetime import date, timedelta
from pathlib import Path
from typing import Any

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


def _own_cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def _process_cpu_seconds(pid: int) -> float:
    """Another process's CPU (user and system), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def exchange_setup(path: str) -> None:
    """In the exchange's own process (its role and database): migrated, the bench's club and
    the other clubs enrolled, their bans published with the tokens the bench made."""
    import django

    django.setup()
    from django.core.management import call_command
    from django.utils import timezone

    from safeground.exchange.models import Club, PublishedBan, PublishedToken
    from safeground.exchange.services import club_enrol

    call_command("migrate", verbosity=0)
    given = json.loads(Path(path).read_text())
    club_enrol(name="Bench Club", contact="security@bench.example", public_key=given["key"])
    now = timezone.now()
    for number, bans in enumerate(given["clubs"]):
        club = Club.objects.create(
            name=f"Club {number}", contact=f"security@club{number}.example",
            public_key="x", key_id=f"k{number}", enrolled_at=now,
        )  # fmt: skip
        for reference, tokens_of in bans:
            ban = PublishedBan.objects.create(club=club, reference=reference, kind="club_ban",
                                              is_life=True, published_at=now)  # fmt: skip
            PublishedToken.objects.bulk_create(PublishedToken(ban=ban, token=t) for t in tokens_of)
    from safeground.exchange.models import ExchangeRecord

    ExchangeRecord.objects.create(at=now, club=Club.objects.get(name="Club 0"), action="publish",
                                  count=sum(len(b) for b in given["clubs"]))  # fmt: skip


def singles(
    args: argparse.Namespace, workdir: str, banned: list[tuple[str, date]], made: list[bytes],
    environment: dict[str, str], holders: list[tuple[str, date]],
) -> list[float]:  # fmt: skip
    """The point of sale against the exchange in its own process, the fixture already holding
    the bench's holders as its tickets: each check's seconds."""
    from django.utils import timezone

    from safeground import background, signing
    from safeground.accounts.models import Organisation
    from safeground.entry.models import Ticket
    from safeground.exchange import checking
    from safeground.matches.models import Club, Competition, Fixture
    from safeground.venues.models import Ground

    per_ban = [[made[2 * i].hex(), made[2 * i + 1].hex()] for i in range(len(banned))]
    size = args.bans_per_club
    clubs = [
        [(hashlib.sha256(f"ban {c} {i}".encode()).hexdigest()[:32], tokens_of)
         for i, tokens_of in enumerate(per_ban[c * size : (c + 1) * size])]
        for c in range(args.clubs)
    ]  # fmt: skip
    given = Path(workdir, "exchange.json")
    given.write_text(json.dumps({"key": signing.public_key_json()["public_key"], "clubs": clubs}))
    exchange_env = environment | {
        "SAFEGROUND_ROLE": "exchange",
        "DATABASE_URL": f"sqlite:///{workdir}/exchange.sqlite3",
        "DEBUG": "false",  # as in production: no query log
        "PYTHONPATH": str(ROOT / "src"),
    }
    subprocess.run([sys.executable, __file__, "--exchange-setup", str(given)], env=exchange_env,
                   check=True)  # fmt: skip
    port = _free_port()
    with open(f"{workdir}/exchange.log", "w") as log:
        server = subprocess.Popen(
            [sys.executable, "-c", "from safeground.cli import main; main()", "exchange",
             "--port", str(port)],
            env=exchange_env, stdout=subprocess.DEVNULL, stderr=log,
        )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                urllib.request.urlopen(f"{url}/api/openapi.json", timeout=1).read()
                break
            except OSError:
                time.sleep(0.1)
        from django.conf import settings

        from safeground.exchange import oprf

        settings.SAFEGROUND_EXCHANGE_URL = url
        # Pinned, as in production: the key is not asked for at every check.
        settings.SAFEGROUND_EXCHANGE_PUBLIC_KEY = oprf.public_key().hex()
        org = Organisation.objects.create(name="Bench Club", slug="bench", kind="club")
        ground = Ground.objects.create(organisation=org, code="bench", name="Bench Park")
        home = Club.objects.create(name="Bench Club", short_name="Bench", organisation=org)
        away = Club.objects.create(name="Visitors", short_name="Visitors")
        fixture = Fixture.objects.create(
            ground=ground, home_club=home, away_club=away,
            competition=Competition.objects.create(name="League"),
            kickoff=timezone.now() + timedelta(days=7),
        )  # fmt: skip
        fixture = Fixture.objects.select_related("ground").get(pk=fixture.pk)
        now = timezone.now()
        count = args.warm_up + args.singles
        rng = random.Random(39)
        people = [person(rng, 900_000 + n) for n in range(count)]
        for n in range(0, count, 10):
            name, born = banned[n % len(banned)]
            people[n] = (variant(name), born)
        Ticket.objects.bulk_create(
            (Ticket(fixture=fixture, barcode=barcode, holder_name=name, holder_dob=born,
                    end="home", area="North Stand", imported_at=now, updated_at=now)
             for barcode, (name, born) in [*((f"T{n:06d}", h) for n, h in enumerate(holders)),
                                           *((f"SALE{n:06d}", p) for n, p in enumerate(people))]),
            batch_size=5000,
        )  # fmt: skip
        seconds = []
        for n in range(count):
            if n == args.warm_up:
                cpu_before = (_own_cpu_seconds(), _process_cpu_seconds(server.pid))
            started = time.perf_counter()
            report = checking.tickets_check(fixture=fixture, barcodes=[f"SALE{n:06d}"])
            took = time.perf_counter() - started
            assert report.matched == (1 if n % 10 == 0 else 0), (n, report)
            if n >= args.warm_up:
                seconds.append(took)
        background.settle()
        club_cpu = _own_cpu_seconds() - cpu_before[0]
        exchange_cpu = _process_cpu_seconds(server.pid) - cpu_before[1]
        # What a check costs each side, whatever the machine's load does to the wall time.
        print(f"point of sale CPU a check: club {1000 * club_cpu / args.singles:.1f} ms, "
              f"exchange {1000 * exchange_cpu / args.singles:.1f} ms")  # fmt: skip
        return seconds
    finally:
        background.settle()  # the last outcomes reported before the exchange stops
        server.terminate()
        server.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clubs", type=int, default=92)
    parser.add_argument("--bans-per-club", type=int, default=22)
    parser.add_argument("--holders", type=int, default=60_000)
    parser.add_argument("--new", type=int, default=6_000, help="tickets sold before the next")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--batch", type=int, default=None, help="holders a batch (the default)")
    parser.add_argument("--singles", type=int, default=200, help="point-of-sale checks timed")
    parser.add_argument("--warm-up", type=int, default=20, help="point-of-sale checks first")
    parser.add_argument("--exchange-setup", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.exchange_setup:
        exchange_setup(args.exchange_setup)
        return

    workdir = tempfile.mkdtemp(prefix="bench-exchange-")
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir}/club.sqlite3"
    os.environ["DJANGO_SETTINGS_MODULE"] = "safeground.settings.dev"
    os.environ["SAFEGROUND_EXCHANGE_PROCESSES"] = str(args.processes)
    # One OPRF key for the bench's own evaluation and the exchange's process.
    os.environ.setdefault(
        "SAFEGROUND_EXCHANGE_OPRF_SEED", base64.b64encode(bytes(range(32))).decode()
    )
    os.environ.setdefault("SECRET_KEY", "bench-exchange-" + "x" * 40)
    environment: dict[str, Any] = dict(os.environ)
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
    single = ""
    if args.singles:
        timed = sorted(singles(args, workdir, banned, made, environment, holders))
        p99 = timed[min(len(timed) - 1, round(0.99 * len(timed)) - 1)] * 1000
        p50 = timed[len(timed) // 2] * 1000
        print(f"point of sale: {len(timed)} single checks, exchange in its own process: "
              f"p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {timed[-1] * 1000:.1f} ms; "
              f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip
        single = f" single_p99_ms={p99:.1f}"
    # On a shared machine the wall time is the CPU time's share: both are said.
    print(f"next check ({args.new} holders new, the rest cached): seconds={next_seconds:.2f} "
          f"({next_cpu:.1f} CPU seconds) matched={again}")  # fmt: skip
    print(f"first check: {cpu:.1f} CPU seconds in all processes; load average {load:.1f}")
    print(
        f"exchange clubs={args.clubs} bans={len(banned)} holders={args.holders} "
        f"seconds={seconds:.2f} plain_seconds={plain_seconds:.2f} matched={matched}{single}"
    )


if __name__ == "__main__":
    main()
