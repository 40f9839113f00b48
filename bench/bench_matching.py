"""Ban-matching benchmark: 60,000 ticket holders of one match against 5,000 bans in force.

Builds a fresh SQLite database of its own (the demo ground, one match, 60,000 tickets, 5,000
people with an active ban), then times `fixture_match`: reading the bans in force and every
holder, scoring the candidates (fuzzy names, date of birth exact or day/month swapped) and
writing the flags, in one transaction, as a ticket import does. 600 holders are planted as
spelling variants of banned people, so there are flags to write.

The peer is the naive way: every holder against every ban with rapidfuzz's C `process.extract`
(no date-of-birth index; the date compared afterwards), timed on a sample of holders and
extrapolated to 60,000.

    .venv/bin/python bench/bench_matching.py            # or: make bench-matching

Last line: `matching holders=60000 bans=5000 seconds=S flagged=F` (target S <= 5).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
FIRST = [
    "Amy",
    "Ben",
    "Cal",
    "Dee",
    "Eli",
    "Fay",
    "Gus",
    "Hal",
    "Ivy",
    "Jon",
    "Kit",
    "Lou",
    "Max",
    "Ned",
    "Oli",
    "Pat",
    "Quin",
    "Ros",
    "Sol",
    "Tam",
]
STARTS = [
    "Ash",
    "Brack",
    "Cold",
    "Dun",
    "Elm",
    "Fern",
    "Gar",
    "Hollin",
    "Ivel",
    "Kes",
    "Lark",
    "Marl",
    "Nether",
    "Oak",
    "Pell",
    "Quar",
]
ENDS = [
    "by",
    "combe",
    "dale",
    "field",
    "ford",
    "ham",
    "hurst",
    "ley",
    "mere",
    "more",
    "stead",
    "ton",
    "well",
    "worth",
    "wick",
    "gate",
]


def _name(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(STARTS)}{rng.choice(ENDS)}-{rng.choice(STARTS)}"


def _dob(rng: random.Random) -> date:
    start = date(1950, 1, 1).toordinal()
    return date.fromordinal(start + rng.randrange(date(2005, 12, 31).toordinal() - start))


def _variant(name: str, rng: random.Random) -> str:
    """How a ticketing system might spell a banned person: order, hyphen, case, a typo."""
    first, last = name.split(" ", 1)
    choice = rng.randrange(4)
    if choice == 0:
        return f"{last.upper()} {first}"
    if choice == 1:
        return f"{first} {last.replace('-', ' ')}"
    if choice == 2:
        return f"{first} {last.replace('-', '')}"
    return f"{first[:-1]}{first[-1]}e {last}"


def setup(holders: int, bans: int, planted: int) -> object:
    from django.contrib.auth import get_user_model

    from safeground.accounts.models import Organisation
    from safeground.bans.models import Ban, Person
    from safeground.demo.season import DEMO_GROUND_FILE
    from safeground.entry.services import tickets_write
    from safeground.entry.ticket_file import TicketRow
    from safeground.matches.services import club_ensure, competition_ensure, fixture_create
    from safeground.venues.models import Block
    from safeground.venues.services import venue_import

    rng = random.Random(60_000)
    club = Organisation.objects.create(name="Bench FC", slug="bench-fc", kind="club")
    officer = get_user_model().objects.create_user(username="bench", password="x")
    ground = venue_import(path=DEMO_GROUND_FILE, organisation=club)
    fixture = fixture_create(
        ground=ground,
        home_club=club_ensure(name="Bench FC", short_name="Bench", organisation=club),
        away_club=club_ensure(name="Visitors"),
        competition=competition_ensure(name="Bench Cup"),
        stage="",
        kickoff=datetime(2016, 10, 26, 19, 45, tzinfo=ZoneInfo("Europe/London")),
        away_allocation=5000,
        layout=ground.layouts.order_by("code").first(),  # a fixture needs one of its layouts
        shares={},
    )
    people = [Person(organisation=club, first_names="", last_name="") for _ in range(bans)]
    banned: list[tuple[str, date]] = []
    for person in people:
        first, last = _name(rng).split(" ", 1)
        person.first_names, person.last_name, person.date_of_birth = first, last, _dob(rng)
        banned.append((person.full_name, person.date_of_birth))
    Person.objects.bulk_create(people, batch_size=1000)
    seats = [
        (block.pk, row, str(block.first_seat + s))
        for block in Block.objects.filter(ground=ground).order_by("code")
        for row in block.rows
        for s in range(block.seats_per_row)
    ]
    rows = []
    for n in range(holders):
        block_id, row, seat = seats[n] if n < len(seats) else (None, "", "")
        if n < planted:
            name, dob = banned[rng.randrange(bans)]
            name = _variant(name, rng)
        else:
            name, dob = _name(rng), _dob(rng)
        rows.append(
            TicketRow(
                n,
                f"B{n:07d}",
                name,
                dob,
                block_id,
                row,
                seat,
                "" if block_id else "Unreserved",
                "home",
            )
        )
    tickets_write(fixture=fixture, rows=rows)  # no bans in force yet: nothing flagged here
    Ban.objects.bulk_create(
        [
            Ban(
                person=person,
                organisation=club,
                type="club_ban",
                issued_by="Bench FC",
                scope="register",
                starts_on=date(2016, 1, 1),
                is_life=True,
                grounds="bench",
                status="active",
                proposed_by=officer,
                approved_by=officer,
            )
            for person in Person.objects.filter(organisation=club)
        ],
        batch_size=1000,
    )
    return fixture


def peer(fixture: object, sample: int) -> tuple[float, int]:
    """Naive all-pairs with rapidfuzz cdist on a sample of holders; seconds for all holders."""
    from rapidfuzz import fuzz, process

    from safeground.bans.matching import name_key, swapped
    from safeground.entry.flagging import bans_in_force_for
    from safeground.entry.models import Ticket

    bans = list(
        bans_in_force_for(fixture).values_list(  # type: ignore[arg-type]
            "person__first_names", "person__last_name", "person__date_of_birth"
        )
    )
    holders = list(Ticket.objects.filter(fixture=fixture).values_list("holder_name", "holder_dob"))
    started = time.perf_counter()
    part = holders[:sample]
    ban_keys = [name_key(f"{first} {last}") for first, last, _ in bans]
    holder_keys = [name_key(n) for n, _ in part]
    hits = 0
    for (_, dob), key in zip(part, holder_keys, strict=True):
        for _, _, j in process.extract(
            key, ban_keys, scorer=fuzz.ratio, score_cutoff=75, limit=None
        ):
            if bans[j][2] in (dob, swapped(dob)):
                hits += 1
    elapsed = time.perf_counter() - started
    return elapsed * len(holders) / len(part), hits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--holders", type=int, default=60_000)
    parser.add_argument("--bans", type=int, default=5_000)
    parser.add_argument("--planted", type=int, default=600)
    parser.add_argument("--peer-sample", type=int, default=3_000)
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="bench-matching-")
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir}/bench.sqlite3"
    os.environ["DJANGO_SETTINGS_MODULE"] = "safeground.settings.dev"
    sys.path.insert(0, str(ROOT / "src"))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import transaction

    from safeground.entry.flagging import fixture_match

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    fixture = setup(args.holders, args.bans, args.planted)
    print(
        f"setup: {args.holders} tickets, {args.bans} bans in {time.perf_counter() - started:.1f}s"
    )
    started = time.perf_counter()
    with transaction.atomic():
        report = fixture_match(fixture=fixture)  # type: ignore[arg-type]
    seconds = time.perf_counter() - started
    peer_seconds, _ = peer(fixture, args.peer_sample)
    print(
        f"peer: naive all-pairs (rapidfuzz process.extract, no date index) "
        f"seconds={peer_seconds:.1f} (extrapolated from {args.peer_sample} holders)"
    )
    print(f"candidates={report.candidates} planted={args.planted}")
    print(
        f"matching holders={report.holders} bans={report.bans} seconds={seconds:.2f} "
        f"flagged={report.flagged}"
    )


if __name__ == "__main__":
    main()
