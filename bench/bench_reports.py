"""Reports benchmark: the season dashboard and a post-match report of a big season.

Builds a fresh database of its own: the demo ground, 50 matches, 20,000 log entries (reports,
then assignments, escalations and resolutions of them, hash-chained as the log writes them),
about 2,000,000 tickets and 2,000,000 scans (admissions and denials with their reasons) and a
register of 600 bans. Bulk-inserted: COPY on PostgreSQL, executemany on SQLite. Then it times
the server (the whole Django request in process: middleware, selectors, template) for the
season dashboard (`/grounds/<code>/season/`) and the post-match report of the busiest match
(`/fixtures/<id>/report/`), medians of several runs.

The peer is the naive way: the same season figures counted in Python over the rows (every log
entry and every scan of the season fetched), timed once.

    .venv/bin/python bench/bench_reports.py                 # PostgreSQL (or: make bench-reports)
    .venv/bin/python bench/bench_reports.py --sqlite        # a SQLite file of its own
    .venv/bin/python bench/bench_reports.py --scans 200000  # a smaller run
    .venv/bin/python bench/bench_reports.py --reuse         # time again on the last database built

`--reuse` (PostgreSQL) keeps the database a previous run built with the same `--pg-db` and only
times it (building 2,000,000 scans takes minutes); it builds as usual when there is none.

Last line: `reports season_ms=X match_ms=Y` (target: each <= 300).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
PG_ADMIN = "postgres://postgres@127.0.0.1:5432/postgres"


def median_ms(runs: int, call: Callable[[], object]) -> tuple[float, list[float]]:
    call()  # warm: templates compiled, connections open
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), times


def fresh_postgres(name: str, *, reuse: bool) -> tuple[str, bool]:
    """The database's URL, and whether it was built already (`reuse`: a previous run's, kept
    if its seeding finished: the register, seeded last, has bans)."""
    import psycopg

    url = PG_ADMIN.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
    if reuse and exists:
        with psycopg.connect(url) as db:
            has_table = db.execute("SELECT to_regclass('bans_ban') IS NOT NULL").fetchone()
            if has_table == (True,) and db.execute(
                "SELECT EXISTS (SELECT FROM bans_ban)"
            ).fetchone() == (True,):
                return url, True
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    return url, False


def _text(value: object) -> str:
    if value is None:
        return "\\N"
    if value is True or value is False:
        return "t" if value else "f"
    if isinstance(value, datetime | date):
        return value.isoformat()
    return str(value)


def bulk(table: str, columns: list[str], rows: list[tuple]) -> None:
    """COPY (text) on PostgreSQL, executemany on SQLite: no ORM cost per row. Values here never
    hold tabs, newlines or backslashes, so the text needs no escaping."""
    from django.db import connection

    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
                for start in range(0, len(rows), 20_000):
                    copy.write(
                        "".join(
                            "\t".join(map(_text, row)) + "\n"
                            for row in rows[start : start + 20_000]
                        )
                    )
        else:
            marks = ", ".join("?" for _ in columns)
            cursor.executemany(
                f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})",
                [tuple(str(v) if isinstance(v, uuid.UUID) else v for v in row) for row in rows],
            )


def seed(args: argparse.Namespace) -> tuple[object, object]:
    from django.db import connection, transaction

    from safeground.accounts.models import Device, Organisation, Role
    from safeground.accounts.services import organisation_create, user_create
    from safeground.demo.season import DEMO_GROUND_FILE, LEAGUE_LAYOUT
    from safeground.entry.models import Scan
    from safeground.incidents.chain import GENESIS, entry_hash
    from safeground.incidents.models import Category, LogEntry
    from safeground.incidents.services import categories_seed
    from safeground.matches.models import FixtureZone
    from safeground.matches.services import club_ensure, competition_ensure, fixture_create
    from safeground.venues.models import Block, Turnstile
    from safeground.venues.services import venue_import

    rng = random.Random(2016)
    categories_seed()
    club_org = organisation_create(name="Bench United", kind=Organisation.Kind.CLUB)
    safety = user_create(
        username="safety", password="bench-only", organisation=club_org, role=Role.SAFETY_OFFICER
    )
    loggist = user_create(
        username="loggist", password="bench-only", organisation=club_org, role=Role.CONTROL_OPERATOR
    )
    ground = venue_import(path=DEMO_GROUND_FILE, organisation=club_org)
    home = club_ensure(name="Bench United", organisation=club_org)
    competitions = [competition_ensure(name=n) for n in ("Premier League", "FA Cup", "EFL Cup")]
    first = datetime(2023, 8, 12, 14, 0, tzinfo=UTC)
    fixtures = [
        fixture_create(
            ground=ground,
            home_club=home,
            away_club=club_ensure(name=f"Visitors {n % 19 + 1}"),
            competition=competitions[0 if n % 5 else 1 + n % 2],
            kickoff=first + timedelta(days=4 * n),
            zones={code: FixtureZone.Use(use) for code, use in LEAGUE_LAYOUT.items()},
            shares={},
        )
        for n in range(args.matches)
    ]
    blocks = list(Block.objects.filter(ground=ground).values_list("pk", flat=True))
    turnstiles = list(Turnstile.objects.filter(gate__ground=ground).values_list("pk", "gate_id"))
    categories = list(Category.objects.values_list("pk", flat=True))
    device = Device.objects.create(
        organisation=club_org, name="Bench turnstile", profile="turnstile", key_hash="0" * 64
    )

    # The log: per match, reports first, then the actions on them (seq in that order).
    started = time.perf_counter()
    per_match = args.entries // args.matches
    for f in fixtures:
        chain = GENESIS
        reports = []
        n_reports = per_match * 7 // 10
        for seq in range(1, n_reports + 1):
            at = f.kickoff + timedelta(minutes=rng.uniform(-90, 120))
            entry = LogEntry(
                fixture=f, seq=seq, kind="report", observed_at=at, logged_at=at,
                author=loggist, author_name="loggist", author_role="control_operator",
                block_id=rng.choice(blocks), category_id=rng.choice(categories),
                severity=rng.randint(1, 5), text=f"Report {seq}", prev_hash=chain,
            )  # fmt: skip
            entry.hash = chain = entry_hash(chain, entry)
            reports.append(entry)
        LogEntry.objects.bulk_create(reports)
        actions = []
        for seq in range(n_reports + 1, per_match + 1):
            report = rng.choice(reports)
            kind = rng.choice(["assignment", "assignment", "escalation", "status"])
            at = report.observed_at + timedelta(minutes=rng.uniform(0.5, 30))
            entry = LogEntry(
                fixture=f, seq=seq, kind=kind, concerns=report, observed_at=at, logged_at=at,
                author=loggist, author_name="loggist", author_role="control_operator",
                status={"assignment": "assigned", "escalation": "escalated"}.get(kind, "resolved"),
                escalated_to="police" if kind == "escalation" else "",
                assignee=safety if kind == "assignment" else None, prev_hash=chain,
            )  # fmt: skip
            entry.hash = chain = entry_hash(chain, entry)
            actions.append(entry)
        LogEntry.objects.bulk_create(actions)
    print(
        f"setup: {LogEntry.objects.count():,} log entries in {time.perf_counter() - started:.1f}s"
    )

    # Tickets and scans: per match, most tickets admitted once; the rest of the scans denied.
    started = time.perf_counter()
    per_match = args.scans // args.matches
    denied_share = 0.03
    admits = int(per_match * (1 - denied_share))
    denials = per_match - admits
    reasons = list(Scan.Reason.values)
    ticket_cols = [
        "id", "fixture_id", "barcode", "holder_name", "holder_dob", "block_id", "row", "seat",
        "area", '"end"', "status", "imported_at", "updated_at", "cancelled_reason", "inside",
        "entered_at", "entered_gate_id",
    ]  # fmt: skip
    scan_cols = [
        "device_id", "nonce", "ticket_id", "barcode", "fixture_id", "turnstile_id", "gate_id",
        "direction", "decision", "reason", "scanned_at", "stored_at", "offline",
    ]  # fmt: skip
    ticket_id = 0
    nonce = 0
    dob = date(1990, 1, 1)
    for f in fixtures:
        tickets, scans = [], []
        kept_out = denials // 3  # tickets denied and never admitted (banned, cancelled)
        for n in range(admits + kept_out):
            ticket_id += 1
            barcode = f"B{f.pk}-{n:06d}"
            admitted = n < admits
            at = f.kickoff + timedelta(minutes=rng.triangular(-120, 60, -20))
            turnstile, gate = rng.choice(turnstiles)
            tickets.append((
                ticket_id, f.pk, barcode, "Holder", dob, rng.choice(blocks), "A", str(n), "",
                "home", "valid", f.kickoff, f.kickoff, "", admitted,
                at if admitted else None, gate if admitted else None,
            ))  # fmt: skip
            nonce += 1
            scans.append((
                device.pk, uuid.UUID(int=nonce), ticket_id, barcode, f.pk, turnstile, gate,
                "in", "admit" if admitted else "deny",
                "" if admitted else rng.choice(["banned", "cancelled", "flagged"]),
                at, at, False,
            ))  # fmt: skip
        for _ in range(denials - kept_out):
            nonce += 1
            turnstile, gate = rng.choice(turnstiles)
            at = f.kickoff + timedelta(minutes=rng.uniform(-120, 30))
            scans.append((
                device.pk, uuid.UUID(int=nonce), None, f"X{nonce}", f.pk, turnstile, gate, "in",
                "deny", rng.choice(reasons), at, at, False,
            ))  # fmt: skip
        with transaction.atomic():
            bulk("entry_ticket", ticket_cols, tickets)
            bulk("entry_scan", scan_cols, scans)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT setval(pg_get_serial_sequence('entry_ticket', 'id'), %s)", [ticket_id]
            )
            cursor.execute("ANALYZE")
    else:
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    print(
        f"setup: {ticket_id:,} tickets, {nonce:,} scans in {time.perf_counter() - started:.1f}s"
        f" ({connection.vendor})"
    )

    # The register: bans issued across the season.
    from safeground.bans.models import Ban, Person

    people = Person.objects.bulk_create(
        Person(organisation=club_org, first_names="Bench", last_name=f"Person{n}",
               date_of_birth=dob)
        for n in range(args.bans)
    )  # fmt: skip
    Ban.objects.bulk_create(
        Ban(person=p, organisation=club_org, type="club_ban", issued_by="Bench United",
            scope="club", starts_on=first.date() + timedelta(days=rng.randrange(-400, 200)),
            ends_on=first.date() + timedelta(days=rng.randrange(300, 2000)), grounds="Bench",
            status=rng.choice(["active", "active", "appealed", "proposed"]), proposed_by=safety)
        for p in people
    )  # fmt: skip
    busiest = max(fixtures, key=lambda f: LogEntry.objects.filter(fixture=f).count())
    return ground, busiest


def built_already() -> tuple[object, object]:
    """The ground and busiest match of a database `seed` built."""
    from django.db.models import Count

    from safeground.matches.models import Fixture

    busiest = (
        Fixture.objects.select_related("ground")
        .annotate(entries=Count("log_entries"))
        .order_by("-entries", "pk")
        .first()
    )
    assert busiest is not None
    return busiest.ground, busiest


def naive_season(ground: object) -> None:
    """The peer: the season's per-match figures counted in Python over every row."""
    from collections import Counter

    from safeground.entry.models import Scan
    from safeground.incidents.models import LogEntry

    incidents: Counter = Counter()
    for fixture_id, kind, category_id in LogEntry.objects.filter(
        fixture__ground=ground
    ).values_list("fixture_id", "kind", "category_id"):
        if kind == "report":
            incidents[fixture_id, category_id] += 1
    denied: Counter = Counter()
    for fixture_id, decision in Scan.objects.filter(fixture__ground=ground).values_list(
        "fixture_id", "decision"
    ):
        if decision == "deny":
            denied[fixture_id] += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sqlite", action="store_true", help="a SQLite file, not PostgreSQL")
    parser.add_argument("--pg-db", default="sg_bench_reports", help="PostgreSQL database (dropped)")
    parser.add_argument("--matches", type=int, default=50)
    parser.add_argument("--entries", type=int, default=20_000)
    parser.add_argument("--scans", type=int, default=2_000_000)
    parser.add_argument("--bans", type=int, default=600)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--no-peer", action="store_true", help="skip the naive peer")
    parser.add_argument(
        "--reuse", action="store_true", help="PostgreSQL: time the database a previous run built"
    )
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="sg-bench-reports-")
    reused = False
    if args.sqlite:
        os.environ["DATABASE_URL"] = f"sqlite:///{workdir}/bench.sqlite3"
    else:
        os.environ["DATABASE_URL"], reused = fresh_postgres(args.pg_db, reuse=args.reuse)
    os.environ["DJANGO_SETTINGS_MODULE"] = "safeground.settings.dev"
    os.environ["DEBUG"] = "false"  # no query log: the server as it runs
    os.environ["ALLOWED_HOSTS"] = "testserver,127.0.0.1"
    os.environ["SAFEGROUND_REQUIRE_2FA"] = "false"
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection, connections
    from django.test import Client

    from safeground.accounts.models import User

    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    call_command("migrate", verbosity=0)
    if reused:
        ground, busiest = built_already()
        print("setup: reusing the database a previous run built")
    else:
        ground, busiest = seed(args)

    client = Client()
    client.force_login(User.objects.get(username="safety"))

    def get(url: str) -> Callable[[], None]:
        def call() -> None:
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)

        return call

    season_ms, season_runs = median_ms(args.runs, get(f"/grounds/{ground.code}/season/"))  # type: ignore[attr-defined]
    match_ms, match_runs = median_ms(args.runs, get(f"/fixtures/{busiest.pk}/report/"))  # type: ignore[attr-defined]
    runs = " ".join(f"{t:.0f}" for t in season_runs)
    print(f"season dashboard ({args.matches} matches): {runs} ms")
    runs = " ".join(f"{t:.0f}" for t in match_runs)
    print(f"post-match report (busiest match): {runs} ms")
    if not args.no_peer:
        started = time.perf_counter()
        naive_season(ground)
        naive_ms = (time.perf_counter() - started) * 1000
        print(f"peer: the season counted in Python over every row: {naive_ms:.0f} ms")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"database: {connection.vendor}; load average: {load}")
    connections.close_all()
    shutil.rmtree(workdir, ignore_errors=True)  # a SQLite run leaves about 1 GB otherwise
    print(f"reports season_ms={season_ms:.0f} match_ms={match_ms:.0f}")


if __name__ == "__main__":
    main()
