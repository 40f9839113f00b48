"""The demo register and the cup tie's tickets. Every person here is fictional: the surnames are
invented, and the 55,000 ticket holders are drawn from fixed lists by a seeded random.

The register is as it stood on the night of the cup tie: the 23 bans of this season (22 club bans
in force and one under appeal), a court banning order, one proposal awaiting approval, and two
people whose bans ended long ago (`safeground apply-retention` erases them). Fixed-term bans run
to 2029-2031 or for life, so the register looks the same whatever today's date is.

Nine ticket holders are planted: eight under spelling variants of banned people (accents,
apostrophes, hyphens, word order, a day/month slip, a misspelling) who are flagged on import, and
one namesake born on another day who is not.
"""

import random
from collections.abc import Callable
from datetime import date, timedelta

from django.conf import settings

from safeground.accounts.models import Organisation, User
from safeground.bans.models import Ban
from safeground.bans.services import ban_appeal, ban_approve, ban_propose, bans_roll_forward
from safeground.entry.services import ImportReport, tickets_write
from safeground.entry.ticket_file import TicketRow
from safeground.matches.models import Fixture
from safeground.venues.models import Block, Ground

SEED = 2016

FIRST_NAMES = [
    "Aaron", "Abdul", "Adam", "Aisha", "Alex", "Alfie", "Amir", "Amy", "Ben", "Bilal", "Callum",
    "Carl", "Charlie", "Chloe", "Chris", "Craig", "Dan", "Darren", "Dave", "Ella", "Emma", "Ethan",
    "Finn", "Gary", "George", "Grace", "Harry", "Hassan", "Imran", "Jack", "Jade", "James",
    "Jason", "Joe", "Josh", "Kai", "Karen", "Kyle", "Lee", "Leon", "Liam", "Lucy", "Luke", "Mark",
    "Matt", "Mia", "Mo", "Nathan", "Neil", "Oscar", "Paul", "Phil", "Priya", "Reece", "Rob",
    "Ryan", "Sam", "Sophie", "Steve", "Terry", "Tom", "Tony", "Wayne", "Yusuf", "Zara",
]  # fmt: skip
# Invented surnames: a syllable and an ending that make names nobody is known by.
SURNAME_STARTS = [
    "Abber", "Bram", "Cask", "Dorn", "Elver", "Fal", "Gorse", "Hask", "Ivor", "Jarr", "Kell",
    "Lomb", "Murr", "Nask", "Oller", "Prest", "Quill", "Rook", "Skell", "Tarr", "Ulver", "Vost",
    "Wend", "Yell",
]  # fmt: skip
SURNAME_ENDS = [
    "acre", "bain", "carrow", "dike", "fold", "gate", "holm", "kettle", "lade", "mire", "nock",
    "peth", "quay", "rigg", "sike", "thwaite",
]  # fmt: skip

# (first names, last name, date of birth, life ban?) for the 22 club bans in force: with the ban
# under appeal, the 23 supporters banned this season before the cup tie.
CLUB_BANS = [
    ("Seán", "Dunmorrow", date(1988, 4, 12), True),
    ("Kieran", "O'Fenwright", date(1991, 7, 3), False),
    ("Lewis", "Garrowby-Hale", date(1985, 11, 23), True),
    ("Jamie", "Hollindale", date(1993, 2, 17), False),
    ("Marcus", "Kestrelle", date(1990, 5, 8), False),
    ("Ryan", "Larkhaven", date(1987, 9, 30), True),
    ("Zoë", "Norbrecken", date(1995, 1, 19), False),
    ("Dean", "Pelliter", date(1982, 6, 14), False),
    ("Owen", "Rathbourne", date(1979, 10, 2), True),
    ("Tyler", "Sallowmere", date(1996, 3, 27), False),
    ("Bradley", "Tormaine", date(1984, 8, 9), False),
    ("Kane", "Umberleigh", date(1992, 12, 21), True),
    ("Reece", "Wrexdale", date(1994, 6, 6), False),
    ("Shaun", "Yarrowby", date(1986, 2, 28), False),
    ("Jordan", "Ashgrove", date(1997, 11, 11), False),
    ("Mitchell", "Brackwater", date(1983, 5, 15), True),
    ("Stacey", "Colvender", date(1990, 9, 1), False),
    ("Lloyd", "Dravenhurst", date(1981, 1, 25), False),
    ("Aiden", "Elmsworthy", date(1998, 4, 4), False),
    ("Gavin", "Farrowdene", date(1978, 7, 19), True),
    ("Nathan", "Glenmorrow", date(1989, 3, 13), False),
    ("Troy", "Hathersedge", date(1991, 10, 30), False),
]
# Ticket holders planted in the cup tie: (name on the ticket, date of birth, block). All but the
# last are flagged; the last is a namesake of a banned person born on another day.
PLANTED = [
    ("Sean Dunmorrow", date(1988, 4, 12), "N-L3"),  # accent
    ("Kieran OFenwright", date(1991, 7, 3), "E-L2"),  # apostrophe
    ("Lewis Garrowby Hale", date(1985, 11, 23), "W-L5"),  # hyphen
    ("HOLLINDALE Jamie", date(1993, 2, 17), "N-U2"),  # word order
    ("Marcus Kestrelle", date(1990, 8, 5), "E-U3"),  # day and month swapped
    ("Rian Larkhaven", date(1987, 9, 30), "W-U1"),  # misspelt
    ("Zoe Norbrekken", date(1995, 1, 19), "S-U2"),  # accent and misspelt
    ("Connor Quenwick", date(1989, 12, 1), "N-L6"),  # the ban under appeal: still in force
    ("Dean Pelliter", date(1979, 3, 2), "S-L7"),  # a namesake, another date of birth: not flagged
]
FLAGGED_PLANTED = 8
AWAY_ZONE = "away-se-cup"


def register_demo_load(*, organisation: Organisation, ground: Ground) -> ImportReport | None:
    """The register, then the cup tie's tickets (matched on import)."""
    officer = User.objects.get(username="banofficer")
    approver = User.objects.get(username="safety")
    propose = _proposer(officer, organisation)
    _club_bans(propose, approver)
    _order_appeal_and_proposal(propose, officer, approver)
    _historic_bans(propose, approver)
    cup_tie = (
        Fixture.objects.filter(ground=ground, zones__zone__code=AWAY_ZONE)
        .select_related("home_club", "away_club", "ground")
        .first()
    )
    if cup_tie is None:
        return None
    # "sample" (tests): two seats a block, where the planted holders sit; "none": no tickets.
    if settings.SAFEGROUND_DEMO_TICKETS == "none":
        return None
    per_block = 2 if settings.SAFEGROUND_DEMO_TICKETS == "sample" else None
    return tickets_write(fixture=cup_tie, rows=cup_tie_tickets(cup_tie, seats_per_block=per_block))


def _proposer(officer: User, organisation: Organisation) -> Callable[..., Ban]:
    """A ban proposed by the club's ban officer: a club ban unless told otherwise."""

    def propose(first: str, last: str, dob: date, **fields: object) -> Ban:
        defaults: dict[str, object] = {
            "by": officer,
            "organisation": organisation,
            "first_names": first,
            "last_name": last,
            "date_of_birth": dob,
            "type": Ban.Type.CLUB_BAN,
            "scope": Ban.Scope.CLUB,
            "issued_by": organisation.name,
        }
        return ban_propose(**(defaults | fields))  # type: ignore[arg-type]

    return propose


def _club_bans(propose: Callable[..., Ban], approver: User) -> None:
    """The season's club bans, approved (the same every load: a seeded random)."""
    rng = random.Random(SEED)
    season_start = date(2016, 8, 1)
    for first, last, dob, life in CLUB_BANS:
        starts = season_start + timedelta(days=rng.randrange(0, 80))
        ban = propose(
            first,
            last,
            dob,
            starts_on=starts,
            is_life=life,
            ends_on=None if life else date(rng.choice([2029, 2030, 2031]), starts.month, 1),
            grounds=rng.choice(
                [
                    "Threw a coin towards the away section (CCTV still on file).",
                    "Pyrotechnic set off in the stand; identified from CCTV and ticket record.",
                    "Entered the pitch at full time.",
                    "Abusive and threatening behaviour towards stewards at the turnstiles.",
                    "Persistent standing and refusal to follow stewards' instructions, third time.",
                ]
            ),
        )
        ban_approve(ban=ban, by=approver, reason="Evidence reviewed; ban proportionate.")


def _order_appeal_and_proposal(propose: Callable[..., Ban], officer: User, approver: User) -> None:
    """A court's banning order, a ban under appeal and one proposed after the cup tie."""
    order = propose(
        "Wesley",
        "Marrowgate",
        date(1980, 2, 2),
        type=Ban.Type.BANNING_ORDER,
        scope=Ban.Scope.REGISTER,
        issued_by="Stratford Magistrates' Court",
        starts_on=date(2015, 3, 9),
        ends_on=date(2030, 3, 8),
        grounds="Convicted of violent disorder after a league match in 2015.",
        reporting_conditions="Report to Forest Gate police station within 5 days; notify any "
        "change of name or address within 7 days.",
        control_periods="Surrender passport 5 days before regulated matches abroad.",
    )
    ban_approve(ban=order, by=approver, reason="Court order received and checked.")
    appealed = propose(
        "Connor",
        "Quenwick",
        date(1989, 12, 1),
        starts_on=date(2016, 9, 12),
        ends_on=date(2030, 9, 11),
        grounds="Seen on CCTV throwing a seat towards the buffer zone.",
    )
    ban_approve(ban=appealed, by=approver, reason="CCTV reviewed.")
    ban_appeal(
        ban=appealed,
        by=officer,
        reason="Letter from the supporter: says the footage shows someone else.",
    )
    propose(
        "Billy",
        "Strathgowan",
        date(1999, 7, 7),
        starts_on=date(2016, 10, 27),
        ends_on=date(2031, 10, 26),
        grounds="Ran onto the pitch after the cup tie; named from CCTV and his ticket.",
    )


def _historic_bans(propose: Callable[..., Ban], approver: User) -> None:
    """Two bans that ran their course before the season."""
    for first, last, dob, ended in [
        ("Terry", "Oldcastle-Venn", date(1970, 3, 3), date(2013, 5, 31)),
        ("Glen", "Pashworth", date(1975, 11, 9), date(2014, 6, 30)),
    ]:
        old = propose(
            first,
            last,
            dob,
            starts_on=ended.replace(year=ended.year - 3),
            ends_on=ended,
            grounds="Missile thrown (historic record).",
        )
        ban_approve(ban=old, by=approver, reason="Approved at the time.")
    bans_roll_forward(today=date(2015, 1, 1))  # the two historic bans run their course


def _surnames() -> list[str]:
    return [start + end for start in SURNAME_STARTS for end in SURNAME_ENDS]


def cup_tie_tickets(
    fixture: Fixture, *, seed: int = SEED, seats_per_block: int | None = None
) -> list[TicketRow]:
    """A ticket for every seat of the home and away zones (the buffers are left empty)."""
    rng = random.Random(seed)
    surnames = _surnames()
    uses = {fz.zone_id: fz.use for fz in fixture.zones.all()}
    end_of_block: dict[int, str] = {}
    blocks = Block.objects.filter(ground=fixture.ground).prefetch_related("zone_members")
    for block in blocks:
        for member in block.zone_members.all():
            use = uses.get(member.zone_id)
            if use in {"home", "away"}:
                end_of_block[block.pk] = use
    planted: dict[str, list[tuple[str, date]]] = {code: [] for _, _, code in PLANTED}
    for name, dob, code in PLANTED:
        planted[code].append((name, dob))
    earliest, span = date(1950, 1, 1).toordinal(), (date(2006, 12, 31) - date(1950, 1, 1)).days
    rows: list[TicketRow] = []
    number = 0
    for block in sorted(blocks, key=lambda b: b.code):
        end = end_of_block.get(block.pk)
        if end is None:
            continue
        to_plant = list(planted.get(block.code, []))
        seats = [
            (row, str(block.first_seat + s))
            for row in block.rows
            for s in range(block.seats_per_row)
        ][: block.capacity if seats_per_block is None else seats_per_block]
        for row, seat in seats:
            number += 1
            if to_plant:
                name, dob = to_plant.pop()
            else:
                name = f"{rng.choice(FIRST_NAMES)} {rng.choice(surnames)}"
                dob = date.fromordinal(earliest + rng.randrange(span))
            rows.append(
                TicketRow(
                    line=number,
                    barcode=f"EFL4-{number:06d}",
                    holder_name=name,
                    holder_dob=dob,
                    block_id=block.pk,
                    row=row,
                    seat=seat,
                    area="",
                    end=end,
                )
            )
    return rows
