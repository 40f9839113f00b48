"""Test data built to order: only what a test asks for, through the project's own services.

How to use them
    Call a builder from a test or a pytest fixture that has the database (`db`,
    `transactional_db`). Each takes keywords for whatever the test cares about and builds what it
    needs but was not given: `fixture()` alone builds a ground, and the ground its club.

        from tests import factories

        def test_an_away_ticket_is_flagged(db):
            day = factories.match_day()         # the cast, the ground, a league match, a cup tie
            ticket = factories.ticket(day.cup_tie, block="S-L2")  # end "away", from the layout
            flag = factories.flag(ticket)       # an open flag on an active ban of the home club

    tests/conftest.py wraps the common ones as pytest fixtures: `cast`, `match_day` and
    `client_for("loggist")` (a test client logged in as one of the cast). The demo season
    (`demo`, `cup_tie`, `league_match`, `login_as`) stays for browser tests and for tests of the
    demo's own story.

What they build
    - `cast()`: the people of a match day under the demo's usernames (safety, loggist,
      supervisor, steward, banofficer, security, auditor at the home club; police and spotter at
      the police force; liaison, the away club's safety officer). `organisation()`, `member()` and
      `members()` make other organisations and people; everyone's password is PASSWORD.
    - `ground()`: a small ground imported from a venue file (venues.services.venue_import):
      North Stand blocks N-L1..N-L3 (home), South Stand S-L1..S-L4 (away, buffer, home); gates A
      (north), F (away: S-L1..S-L3) and G (S-L4) with turnstiles A01.., F01.., G01..; concourses
      N-L and S-L; zones for a league layout (the default one) and a cup layout with a wider away
      section (CUP_LAYOUT). Codes follow the demo ground's scheme.
    - `club()`, `competition()`, `fixture()` (matches.services.fixture_create), `match_day()`.
    - `person()`, `ban(status=...)` through the register's services (propose, approve, appeal,
      decide, roll forward), `flag()` (confirmed and cleared through entry.services).
    - `ticket()`, `tickets()` (many at once), `device()` (a turnstile's key), `report()` (a log
      entry through incidents.services), `categories()`, `scan()` (a scan decided as a
      turnstile's is, at a time from kick-off).
    - `case()` (casework.services.case_open, on a new missile report unless given entries),
      `evidence()` (a PNG still, or kind="cctv" for a camera reference), `upload()` (a file as a
      browser sends it; `PNG` is the smallest valid one).
    - Match-day deployment: `post()` (a steward posted through incidents' steward_post_assign),
      `checks()` (the default checklist at every place of the match), `check_done()` (a result),
      `plan_signed_off()` (the plan made from the category and signed by both roles).

Moving a suite off the demo
    `cup_tie`/`league_match` -> `match_day.cup_tie`/`.league_match` (same usernames, same
    sharing); zone away-se-cup -> away-south-cup, buffer-se-cup-* -> buffer-south-cup, away-se ->
    away-south; blocks N-L1..3 and S-L1..4, gates A and F and turnstiles F01..F10 exist as in the
    demo. tests/entry's `gates`: `ticket(cup, barcode="AWAY-1", block="S-L2", seat="12")` and so
    on, `flag(ticket)` / `flag(ticket, status="confirmed")`, `device(cast.home)`; `race_tickets`:
    `tickets(cup, n, prefix="RACE")` and `device(..., profile=...)`; the `register` of
    tests/bans: `ban(home, status=...)`. A transactional test's flush also empties the seeded
    categories: match_day() and report() seed them again (a test that reads categories with
    neither calls categories()). The cast have no names: a user shows as their username ("Kim
    Ashby" is "steward"). The cup layout has no home-south: a South Stand post or concourse
    covers away-south-cup and buffer-south-cup only; the demo's E-L.., W-.. and upper-tier
    blocks are N-L1..3 and S-L1..4 here.

Every name here is invented.
"""

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from tempfile import TemporaryDirectory
from zoneinfo import ZoneInfo

import yaml
from django.test import Client
from django.utils import timezone

from safeground import background
from safeground.accounts.models import Device, Organisation, Role, User
from safeground.accounts.services import device_create, organisation_create, user_create
from safeground.bans.models import Ban, Person
from safeground.bans.services import (
    ban_appeal,
    ban_appeal_decide,
    ban_approve,
    ban_propose,
    ban_reject,
    bans_roll_forward,
)
from safeground.deployment.models import CheckResult, MatchCheck
from safeground.deployment.services import check_record, checks_prepare
from safeground.entry.models import Ticket, TicketFlag
from safeground.entry.runtime import lookups
from safeground.entry.runtime.lookups import DeviceInfo
from safeground.entry.scans import ScanResult, scan_decide
from safeground.entry.services import flag_clear, flag_confirm
from safeground.incidents.categories import SEED as CATEGORY_SEED
from safeground.incidents.models import Category, LogEntry, StewardPost
from safeground.incidents.posts import steward_post_assign
from safeground.incidents.services import (
    Place,
    categories_seed,
    log_entry_append,
)
from safeground.matches.models import (
    Club,
    Competition,
    Fixture,
    FixtureShare,
    FixtureZone,
    PlanVersion,
)
from safeground.matches.services import (
    club_ensure,
    competition_ensure,
    fixture_create,
    plan_generate,
    plan_sign,
)
from safeground.venues.models import Block, Ground, Zone
from safeground.venues.services import venue_import

PASSWORD = "matchday-test"
LONDON = ZoneInfo("Europe/London")
# The first match at a ground kicks off here; each further one a week later.
KICKOFF = datetime(2024, 3, 9, 15, 0, tzinfo=LONDON)

HOME_CLUB = "Riverside Athletic"
POLICE_FORCE = "Riverside Constabulary"
AWAY_CLUB = "Eastport Rovers"  # the cup tie's visitors, who use Safeground too
OTHER_CLUB = "Harbour Town"  # a visiting club without an organisation here
LEAGUE = "Regional League"
CUP = "County Cup"


def _first_free(base: str, taken: Callable[[str], bool], sep: str = "") -> str:
    """`base`, or `base` numbered from 2 when it is taken (unique names without a counter)."""
    name, number = base, 1
    while taken(name):
        number += 1
        name = f"{base}{sep}{number}"
    return name


# --- organisations and people -------------------------------------------------------------------

DEFAULT_NAMES = {
    Organisation.Kind.CLUB: HOME_CLUB,
    Organisation.Kind.POLICE_FORCE: POLICE_FORCE,
    Organisation.Kind.NATIONAL_UNIT: "Football Policing Unit",
}
CLUB_ROLES = (
    Role.SAFETY_OFFICER,
    Role.CONTROL_OPERATOR,
    Role.STEWARD_SUPERVISOR,
    Role.STEWARD,
    Role.BAN_OFFICER,
    Role.AUDITOR,
)
POLICE_ROLES = (Role.POLICE_COMMANDER, Role.POLICE_SPOTTER)
USERNAMES = {
    Role.SAFETY_OFFICER: "safety",
    Role.CONTROL_OPERATOR: "loggist",
    Role.STEWARD_SUPERVISOR: "supervisor",
    Role.STEWARD: "steward",
    Role.BAN_OFFICER: "banofficer",
    Role.AUDITOR: "auditor",
    Role.POLICE_COMMANDER: "police",
    Role.POLICE_SPOTTER: "spotter",
}


def organisation(
    *, name: str = "", kind: str = Organisation.Kind.CLUB, slug: str = ""
) -> Organisation:
    """Without a name, the kind's default name (numbered when it is taken)."""
    if not name:
        name = _first_free(
            DEFAULT_NAMES[Organisation.Kind(kind)],
            lambda n: Organisation.objects.filter(name=n).exists(),
            sep=" ",
        )
    return organisation_create(name=name, kind=kind, slug=slug)


def member(
    organisation: Organisation,
    role: str,
    *,
    username: str = "",
    password: str = PASSWORD,
    first_name: str = "",
    last_name: str = "",
) -> User:
    """A user with one role at one organisation; by default named after the role (steward,
    steward2, ...)."""
    username = username or _first_free(
        USERNAMES[Role(role)], lambda n: User.objects.filter(username=n).exists()
    )
    return user_create(
        username=username,
        password=password,
        organisation=organisation,
        role=role,
        first_name=first_name,
        last_name=last_name,
    )


def members(organisation: Organisation, roles: Sequence[str] = ()) -> dict[str, User]:
    """One member of each role (by default the club's roles, or the police's): role -> user."""
    if not roles:
        roles = CLUB_ROLES if organisation.kind == Organisation.Kind.CLUB else POLICE_ROLES
    return {role: member(organisation, role) for role in roles}


def member_of(organisation: Organisation | int, *roles: str, besides: Sequence[User] = ()) -> User:
    """The organisation's earliest member with one of the roles, other than `besides`; a new
    member with the first role when there is none."""
    org_id = organisation if isinstance(organisation, int) else organisation.pk
    found = (
        User.objects.filter(memberships__organisation_id=org_id, memberships__role__in=roles)
        .exclude(pk__in=[user.pk for user in besides])
        .order_by("pk")
        .first()
    )
    if found is not None:
        return found
    return member(Organisation.objects.get(pk=org_id), roles[0])


# (username, organisation, role): the demo's logins, so tests name people as the demo does.
CAST = [
    ("safety", "home", Role.SAFETY_OFFICER),
    ("loggist", "home", Role.CONTROL_OPERATOR),
    ("supervisor", "home", Role.STEWARD_SUPERVISOR),
    ("steward", "home", Role.STEWARD),
    ("banofficer", "home", Role.BAN_OFFICER),
    ("auditor", "home", Role.AUDITOR),
    ("police", "police", Role.POLICE_COMMANDER),
    ("spotter", "police", Role.POLICE_SPOTTER),
    ("liaison", "away", Role.SAFETY_OFFICER),
    # A second ban officer: decides appeals on bans that banofficer proposed and safety approved.
    ("security", "home", Role.BAN_OFFICER),
]


@dataclass(frozen=True)
class Cast:
    home: Organisation  # the home club, whose ground it is
    police: Organisation  # the force that polices its matches
    away: Organisation  # a visiting club that uses Safeground (its liaison)
    users: dict[str, User]

    def __getitem__(self, username: str) -> User:
        return self.users[username]


def cast(
    *,
    home: Organisation | None = None,
    police: Organisation | None = None,
    away: Organisation | None = None,
) -> Cast:
    """The three organisations of a match day and the demo's ten logins in them (once a test)."""
    orgs = {
        "home": home or organisation(name=HOME_CLUB),
        "police": police or organisation(name=POLICE_FORCE, kind=Organisation.Kind.POLICE_FORCE),
        "away": away or organisation(name=AWAY_CLUB),
    }
    users = {username: member(orgs[org], role, username=username) for username, org, role in CAST}
    return Cast(home=orgs["home"], police=orgs["police"], away=orgs["away"], users=users)


def logged_in(user: User) -> Client:
    """A test client with the user's session (the second factor is the settings' business)."""
    client = Client()
    client.force_login(user)
    return client


# --- the ground ---------------------------------------------------------------------------------


def _box(x0: int, y0: int, x1: int, y1: int) -> str:
    return f"{x0},{y0} {x1},{y0} {x1},{y1} {x0},{y1}"


NORTH_BLOCKS = ("N-L1", "N-L2", "N-L3")
SOUTH_BLOCKS = ("S-L1", "S-L2", "S-L3", "S-L4")
# The usual (default) layout, and the cup layout: the away section takes the league's buffer
# block, and the buffer moves to the south stand's home block.
LEAGUE_LAYOUT = {
    "home-north": FixtureZone.Use.HOME,
    "home-south": FixtureZone.Use.HOME,
    "away-south": FixtureZone.Use.AWAY,
    "buffer-south": FixtureZone.Use.BUFFER,
}
CUP_LAYOUT = {
    "home-north": FixtureZone.Use.HOME,
    "away-south-cup": FixtureZone.Use.AWAY,
    "buffer-south-cup": FixtureZone.Use.BUFFER,
}


def venue_text(
    *,
    code: str = "riverside-park",
    name: str = "Riverside Park",
    rows: str = "A-J",
    seats_per_row: int = 20,
    turnstiles: int = 10,
) -> str:
    """The small ground as a venue file (docs/venue-file.md)."""
    capacity = seats_per_row * (ord(rows[-1]) - ord(rows[0]) + 1)

    def block(code: str, stand: str, number: int, shape: str) -> dict:
        return {
            "code": code,
            "name": f"{'North' if stand == 'N' else 'South'} Lower {number}",
            "stand": stand,
            "tier": "L",
            "capacity": capacity,
            "rows": rows,
            "seats_per_row": seats_per_row,
            "shape": shape,
        }

    def gate(code: str, name: str, position: str, serves: list[str]) -> dict:
        return {
            "code": code,
            "name": name,
            "position": position,
            "turnstiles": turnstiles,
            "serves": serves,
        }

    def zone(code: str, name: str, kind: str, blocks: list[str], default: bool) -> dict:
        return {"code": code, "name": name, "kind": kind, "default": default, "blocks": blocks}

    lower = [{"code": "L", "name": "Lower tier"}]
    venue = {
        "ground": {
            "code": code,
            "name": name,
            "layout_note": "A test ground, not a real one",
            "plan": {"width": 800, "height": 600},
            "pitch": _box(200, 150, 600, 450),
        },
        "stands": [
            {"code": "N", "name": "North Stand", "tiers": lower},
            {"code": "S", "name": "South Stand", "tiers": lower},
        ],
        "blocks": [
            *(
                block(c, "N", n + 1, _box(205 + 130 * n, 40, 335 + 130 * n, 130))
                for n, c in enumerate(NORTH_BLOCKS)
            ),
            *(
                block(c, "S", n + 1, _box(200 + 100 * n, 470, 300 + 100 * n, 560))
                for n, c in enumerate(SOUTH_BLOCKS)
            ),
        ],
        "gates": [
            gate("A", "Gate A", "400,15", list(NORTH_BLOCKS)),
            gate("F", "Gate F (away)", "250,585", ["S-L1", "S-L2", "S-L3"]),
            gate("G", "Gate G", "550,585", ["S-L4"]),
        ],
        "concourses": [
            {"code": "N-L", "name": "North lower concourse", "serves": list(NORTH_BLOCKS)},
            {"code": "S-L", "name": "South lower concourse", "serves": list(SOUTH_BLOCKS)},
        ],
        "zones": [
            zone("home-north", "North Stand (home)", "home", list(NORTH_BLOCKS), True),
            zone("home-south", "South Stand home end", "home", ["S-L4"], True),
            zone("away-south", "Away section (league)", "away", ["S-L1", "S-L2"], True),
            zone("buffer-south", "Buffer (league)", "buffer", ["S-L3"], True),
            zone("away-south-cup", "Away section (cup)", "away", ["S-L1", "S-L2", "S-L3"], False),
            zone("buffer-south-cup", "Buffer (cup)", "buffer", ["S-L4"], False),
        ],
        "adjacency": [
            list(pair) for blocks in (NORTH_BLOCKS, SOUTH_BLOCKS) for pair in pairwise(blocks)
        ],
        "layouts": [
            {
                "code": "league",
                "name": "League",
                "zones": {k: str(v) for k, v in LEAGUE_LAYOUT.items()},
            },
            {
                "code": "cup",
                "name": "Cup / large away end",
                "zones": {k: str(v) for k, v in CUP_LAYOUT.items()},
            },
        ],
    }
    return yaml.safe_dump(venue, sort_keys=False, allow_unicode=True)


def ground(
    organisation_: Organisation | None = None,
    /,
    *,
    code: str = "",
    name: str = "Riverside Park",
    rows: str = "A-J",
    seats_per_row: int = 20,
    turnstiles: int = 10,
) -> Ground:
    """The small ground (see venue_text), imported as a venue file is; a new club owns it unless
    one is given."""
    owner = organisation_ or organisation()
    code = code or _first_free(
        "riverside-park", lambda c: Ground.objects.filter(code=c).exists(), sep="-"
    )
    text = venue_text(
        code=code, name=name, rows=rows, seats_per_row=seats_per_row, turnstiles=turnstiles
    )
    with TemporaryDirectory() as folder:
        path = Path(folder) / f"{code}.yaml"
        path.write_text(text, encoding="utf-8")
        return venue_import(path=path, organisation=owner)


# --- clubs and fixtures -------------------------------------------------------------------------


def club(
    name: str = HOME_CLUB, *, short_name: str = "", organisation: Organisation | None = None
) -> Club:
    """The club of that name (made once: matches.services.club_ensure)."""
    return club_ensure(name=name, short_name=short_name, organisation=organisation)


def competition(name: str = LEAGUE) -> Competition:
    return competition_ensure(name=name)


def fixture(
    ground_: Ground | None = None,
    /,
    *,
    home_club: Club | None = None,
    away_club: Club | None = None,
    competition: Competition | None = None,
    kickoff: datetime | None = None,
    zones: Mapping[str, str] | None = None,
    shares: Mapping[Organisation, str] | None = None,
    stage: str = "",
    away_allocation: int = 0,
) -> Fixture:
    """A match through matches.services.fixture_create.

    Defaults: a new ground; its owner's club at home against OTHER_CLUB in LEAGUE; the ground's
    default zones (the league layout; pass zones=CUP_LAYOUT for the cup's); shared with nobody;
    kick-off KICKOFF, a week later for each match already at the ground."""
    ground_ = ground_ or ground()
    owner = ground_.organisation
    if kickoff is None:
        kickoff = KICKOFF + timedelta(weeks=Fixture.objects.filter(ground=ground_).count())
    if zones is None:
        zones = {
            zone.code: zone.kind
            for zone in Zone.objects.filter(ground=ground_, is_default=True)
            if zone.kind in FixtureZone.Use.values
        }
    return fixture_create(
        ground=ground_,
        home_club=home_club or club(owner.name, organisation=owner),
        away_club=away_club or club(OTHER_CLUB),
        competition=competition or competition_ensure(name=LEAGUE),
        kickoff=kickoff,
        stage=stage,
        away_allocation=away_allocation,
        zones=zones,
        shares=shares or {},
    )


@dataclass(frozen=True)
class MatchDay:
    cast: Cast
    ground: Ground
    league_match: Fixture  # against OTHER_CLUB, league layout, shared with the police
    cup_tie: Fixture  # a week later against AWAY_CLUB, cup layout, shared with police and away


def match_day(cast_: Cast | None = None, /) -> MatchDay:
    """The cast, the home club's ground, and two of its matches (the demo's two kinds), with the
    log's categories ready."""
    categories()
    people = cast_ or cast()
    ground_ = ground(people.home)
    police = {people.police: FixtureShare.Purpose.POLICE}
    league = fixture(ground_, away_allocation=1500, shares=police)
    cup = fixture(
        ground_,
        away_club=club(people.away.name, organisation=people.away),
        competition=competition(CUP),
        stage="Fourth round",
        away_allocation=2000,
        zones=CUP_LAYOUT,
        shares=police | {people.away: FixtureShare.Purpose.AWAY_CLUB},
    )
    return MatchDay(cast=people, ground=ground_, league_match=league, cup_tie=cup)


# --- the register -------------------------------------------------------------------------------

# Invented surnames for the register's people (never a real person's name).
SURNAMES = ("Vantwick", "Orbenshaw", "Quellmoor", "Darrowfen", "Eskerby", "Pollendine")
FIRST_NAMES = ("Ellis", "Rowan", "Jules", "Casey", "Morgan", "Avery")


def _default_person(organisation_: Organisation) -> tuple[str, str, date]:
    n = Person.objects.filter(organisation=organisation_).count()
    return (
        FIRST_NAMES[n % len(FIRST_NAMES)],
        SURNAMES[n % len(SURNAMES)] + (str(n // len(SURNAMES) + 1) if n >= len(SURNAMES) else ""),
        date(1985, 1, 1) + timedelta(days=97 * n),
    )


def person(
    organisation_: Organisation,
    /,
    *,
    first_names: str = "",
    last_name: str = "",
    date_of_birth: date | None = None,
    supporter_number: str = "",
) -> Person:
    """Someone on the club's register with no ban yet (the register has no service that adds a
    person alone: ban_propose finds or adds them)."""
    first, last, dob = _default_person(organisation_)
    return Person.objects.create(
        organisation=organisation_,
        first_names=first_names or first,
        last_name=last_name or last,
        date_of_birth=date_of_birth or dob,
        supporter_number=supporter_number,
    )


# Fixed-term defaults, so the register reads the same whatever today's date is.
STARTS_ON = date(2024, 1, 1)
ENDS_ON = date(2034, 12, 31)
NOT_YET = (date(2099, 1, 1), date(2100, 1, 1))  # an approved ban that has not started
LONG_AGO = (date(2012, 6, 1), date(2013, 5, 31))  # an expired one
STATUS_PATH = {
    Ban.Status.PROPOSED: (),
    Ban.Status.REJECTED: ("reject",),
    Ban.Status.APPROVED: ("approve",),
    Ban.Status.ACTIVE: ("approve",),
    Ban.Status.APPEALED: ("approve", "appeal"),
    Ban.Status.UPHELD: ("approve", "appeal", "decide"),
    Ban.Status.REVOKED: ("approve", "appeal", "decide"),
    Ban.Status.EXPIRED: ("approve", "expire"),
}


def ban(
    organisation_: Organisation | None = None,
    /,
    *,
    status: str = Ban.Status.ACTIVE,
    person: Person | None = None,
    first_names: str = "",
    last_name: str = "",
    date_of_birth: date | None = None,
    proposed_by: User | None = None,
    approved_by: User | None = None,
    decided_by: User | None = None,
    starts_on: date | None = None,
    ends_on: date | None = None,
    is_life: bool = False,
    type: str = Ban.Type.CLUB_BAN,
    scope: str = Ban.Scope.CLUB,
    grounds: str = "Threw a coin towards the away section.",
    **fields: object,
) -> Ban:
    """A ban brought to `status` the way the register does it: proposed by a ban officer,
    approved (or rejected) by another user, appealed, decided by a third, rolled forward.

    The people are the organisation's earliest ban officer and safety officer unless given (new
    ones when it has none). An approved ban starts in 2099 unless dates are given; an expired
    one ended in 2013 and is expired by bans_roll_forward, which rolls every other ban due then
    too. `fields` go to ban_propose as they are (issued_by, ground, reporting_conditions, ...)."""
    if organisation_ is None:
        first = proposed_by.memberships.first() if proposed_by else None
        organisation_ = first.organisation if first else organisation()
    status = Ban.Status(status)
    if person is not None:
        first_names = first_names or person.first_names
        last_name = last_name or person.last_name
        date_of_birth = date_of_birth or person.date_of_birth
    default_first, default_last, default_dob = _default_person(organisation_)
    if starts_on is None and ends_on is None and not is_life:
        starts_on, ends_on = {
            Ban.Status.APPROVED: NOT_YET,
            Ban.Status.EXPIRED: LONG_AGO,
        }.get(status, (STARTS_ON, ENDS_ON))
    proposer = proposed_by or member_of(organisation_, Role.BAN_OFFICER)
    made = ban_propose(
        by=proposer,
        organisation=organisation_,
        first_names=first_names or default_first,
        last_name=last_name or default_last,
        date_of_birth=date_of_birth or default_dob,
        type=type,
        scope=scope,
        starts_on=starts_on or STARTS_ON,
        ends_on=ends_on,
        is_life=is_life,
        grounds=grounds,
        **fields,
    )
    for step in STATUS_PATH[status]:
        if step in {"approve", "reject"}:
            approver = approved_by or member_of(
                organisation_, Role.SAFETY_OFFICER, Role.BAN_OFFICER, besides=[proposer]
            )
            if step == "reject":
                made = ban_reject(ban=made, by=approver, reason="Not enough evidence.")
            else:
                made = ban_approve(ban=made, by=approver, reason="Evidence reviewed.")
        elif step == "appeal":
            made = ban_appeal(ban=made, by=proposer, reason="Letter from the supporter.")
        elif step == "decide":
            decider = decided_by or member_of(
                organisation_,
                Role.BAN_OFFICER,
                Role.SAFETY_OFFICER,
                besides=[proposer, approver],
            )
            made = ban_appeal_decide(ban=made, by=decider, outcome=status, reason="Appeal heard.")
        elif step == "expire":
            assert made.ends_on is not None, "an expired ban needs an end date"
            bans_roll_forward(today=made.ends_on + timedelta(days=1))
            made.refresh_from_db()
    assert made.status == status, f"ban #{made.pk} is {made.status}, not {status}: check dates"
    return made


def flag(
    ticket_: Ticket,
    ban_: Ban | None = None,
    /,
    *,
    status: str = TicketFlag.Status.OPEN,
    score: float = 96.0,
    by: User | None = None,
    note: str = "",
) -> TicketFlag:
    """A flag linking a ticket to a ban, as matching raises it (written directly, as
    entry.flagging does), then confirmed (the ticket is cancelled) or cleared through
    entry.services. Without a ban: a new active ban of the home club. A pair that matching has
    already flagged keeps its flag."""
    home = ticket_.fixture.ground.organisation
    ban_ = ban_ or ban(home)
    raised, _ = TicketFlag.objects.get_or_create(
        ticket=ticket_, ban=ban_,
        defaults={"score": score, "flagged_at": timezone.now(), "reasons": ["test flag"]},
    )  # fmt: skip
    if status == TicketFlag.Status.OPEN:
        return raised
    officer = by or member_of(home, Role.BAN_OFFICER)
    if status == TicketFlag.Status.CONFIRMED:
        return flag_confirm(flag=raised, by=officer, note=note or "Same face as the CCTV still.")
    return flag_clear(flag=raised, by=officer, note=note or "Another person; ID checked.")


# --- entry --------------------------------------------------------------------------------------


def _end_of(fixture_: Fixture, block_: Block) -> str:
    uses = set(
        FixtureZone.objects.filter(fixture=fixture_, zone__members__block=block_).values_list(
            "use", flat=True
        )
    ) & {FixtureZone.Use.HOME, FixtureZone.Use.AWAY}
    if len(uses) != 1:
        raise ValueError(f"{block_.code} is in no home or away zone of {fixture_}: give end=")
    return uses.pop()


def ticket(
    fixture_: Fixture,
    /,
    *,
    block: str = "N-L1",
    barcode: str = "",
    end: str = "",
    row: str = "C",
    seat: str = "",
    holder_name: str = "",
    holder_dob: date = date(1990, 1, 1),
    status: str = Ticket.Status.VALID,
    area: str = "",
    **fields: object,
) -> Ticket:
    """A ticket as the ticketing system exported it. Written directly: the import service
    (entry.services.tickets_write) also matches every holder against the register, which a test
    asks for itself. A seat in N-L1 (home) unless told; the end (home/away) comes from the
    block's zone in this match's layout; an unreserved ticket gives block="", area= and end=."""
    number = Ticket.objects.filter(fixture=fixture_).count() + 1
    barcode = barcode or f"T{fixture_.pk}-{number:05d}"
    seat_block = Block.objects.get(ground=fixture_.ground_id, code=block) if block else None
    if seat_block is not None:
        end = end or _end_of(fixture_, seat_block)
    elif not (area and end):
        raise ValueError("a ticket without a block needs area= and end=")
    now = timezone.now()
    return Ticket.objects.create(
        fixture=fixture_,
        barcode=barcode,
        holder_name=holder_name or f"Holder {barcode}",
        holder_dob=holder_dob,
        block=seat_block,
        row=row if seat_block else "",
        seat=(seat or str(number)) if seat_block else "",
        area=area,
        end=end,
        status=status,
        imported_at=now,
        updated_at=now,
        **fields,
    )


def tickets(
    fixture_: Fixture,
    count: int,
    /,
    *,
    block: str = "S-L2",
    end: str = "",
    prefix: str = "BULK",
    holder_dob: date = date(1990, 1, 1),
) -> list[Ticket]:
    """`count` tickets in one block (PREFIX-00000, ...), in one bulk insert."""
    seat_block = Block.objects.get(ground=fixture_.ground_id, code=block)
    end = end or _end_of(fixture_, seat_block)
    now = timezone.now()
    return Ticket.objects.bulk_create(
        Ticket(fixture=fixture_, barcode=f"{prefix}-{n:05d}", holder_name=f"Holder {n}",
               holder_dob=holder_dob, block=seat_block, row="A", seat=str(n), end=end,
               imported_at=now, updated_at=now)
        for n in range(count)
    )  # fmt: skip


def device(
    organisation_: Organisation, /, *, name: str = "", profile: str = Device.Profile.TURNSTILE
) -> tuple[Device, str]:
    """A device and its key (shown once, as accounts.services.device_create returns it)."""
    name = name or _first_free(
        Device.Profile(profile).label,
        lambda n: Device.objects.filter(organisation=organisation_, name=n).exists(),
        sep=" ",
    )
    return device_create(organisation=organisation_, name=name, profile=profile)


def scan(
    fixture_: Fixture,
    barcode: str,
    /,
    *,
    turnstile: str = "A01",
    minutes: float = -30,
    direction: str = "in",
) -> ScanResult:
    """A scan at a turnstile `minutes` from the match's kick-off, decided as a turnstile's is
    (entry.scans.scan_decide: admitted or denied with its reason), by the home club's device."""
    # The gates' caches hold turnstiles and matches by id for a few seconds: a test's are new.
    lookups.caches_clear()
    organisation_ = fixture_.ground.organisation
    found = Device.objects.filter(organisation=organisation_, name="Report turnstile").first()
    made = found or device(organisation_, name="Report turnstile")[0]
    at = fixture_.kickoff + timedelta(minutes=minutes)
    return scan_decide(
        device=DeviceInfo(
            made.pk, organisation_.pk, made.name, made.profile, made.get_profile_display()
        ),
        turnstile=turnstile,
        barcode=barcode,
        scanned_at=at,
        nonce=uuid.uuid4(),
        direction=direction,
        now=at,
    )


# --- the log ------------------------------------------------------------------------------------


def categories() -> None:
    """The log's categories. Migrations seed them, but the flush after a transactional test
    (live sockets, races) empties them: seeded again when any is missing."""
    if Category.objects.count() < len(CATEGORY_SEED):
        categories_seed()


def report(
    fixture_: Fixture,
    /,
    *,
    author: User | None = None,
    category: str = "missile",
    text: str = "Coins thrown towards the home section",
    place: Place | None = None,
    **fields: object,
) -> LogEntry:
    """A report in the match's log (incidents.services.log_entry_append); by default by the home
    club's control-room operator, in the first block of the away section."""
    categories()
    if author is None:
        author = member_of(fixture_.ground.organisation, Role.CONTROL_OPERATOR)
    if place is None:
        away_zones = FixtureZone.objects.filter(fixture=fixture_, use=FixtureZone.Use.AWAY)
        away = (
            Block.objects.filter(zone_members__zone__in=away_zones.values("zone"))
            .order_by("code")
            .first()
        )
        assert away is not None, f"{fixture_} has no away section: give place="
        place = Place(block=away.code)
    entry = log_entry_append(
        fixture=fixture_, author=author, category=category, text=text, place=place, **fields
    )
    background.settle()  # its flashpoint warning, if any, is in the log too
    return entry


# --- casework -----------------------------------------------------------------------------------

# The smallest valid PNG (one transparent pixel): a CCTV still for tests.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


def upload(name: str = "still.png", content: bytes = PNG, content_type: str = "image/png"):  # type: ignore[no-untyped-def]
    """A file as a browser uploads it."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, content, content_type=content_type)


def case(
    fixture_: Fixture,
    /,
    *,
    entries: Sequence[LogEntry] = (),
    by: User | None = None,
    title: str = "Coins thrown from the away section",
):  # type: ignore[no-untyped-def]
    """A case opened (casework.services.case_open) on the entries given, or on a new missile
    report in the away section; by the home club's ban officer unless told."""
    from safeground.casework.services import case_open

    entries = list(entries) or [report(fixture_)]
    by = by or member_of(fixture_.ground.organisation, Role.BAN_OFFICER)
    return case_open(by=by, fixture=fixture_, entries=entries, title=title)


def evidence(case_, /, *, by: User | None = None, kind: str = "photo", **fields: object):  # type: ignore[no-untyped-def]
    """A piece of evidence on the case (casework.evidence.evidence_add): a PNG still unless told
    (kind="cctv" gives a camera reference of two minutes at the case's first entry)."""
    from safeground.casework.evidence import evidence_add

    by = by or case_.opened_by
    if kind == "cctv":
        start = case_.entries.order_by("seq").first().observed_at
        fields = {"camera": "CAM 12", "footage_from": start,
                  "footage_to": start + timedelta(minutes=2)} | fields  # fmt: skip
    else:
        fields = {"upload": upload()} | fields
    return evidence_add(by=by, fixture=case_.fixture, case=case_, kind=kind, **fields)


# --- match-day deployment -----------------------------------------------------------------------


def post(
    fixture_: Fixture,
    steward: User,
    /,
    *,
    zone: str = "",
    gate: str = "",
    concourse: str = "",
    by: User | None = None,
) -> StewardPost:
    """The steward posted for the match (by default to the match's away zone), by the home
    club's control-room operator."""
    if not (zone or gate or concourse):
        away = FixtureZone.objects.filter(fixture=fixture_, use=FixtureZone.Use.AWAY).first()
        assert away is not None, f"{fixture_} has no away zone: give zone="
        zone = away.zone.code
    by = by or member_of(fixture_.ground.organisation, Role.CONTROL_OPERATOR)
    return steward_post_assign(
        fixture=fixture_, steward=steward, assigned_by=by, zone=zone, gate=gate, concourse=concourse
    )


def checks(fixture_: Fixture, /) -> list[MatchCheck]:
    """The ground's checklist (the default one) at every place of the match."""
    checks_prepare(fixture=fixture_)
    return list(fixture_.match_checks.order_by("pk"))


def check_done(
    check: MatchCheck, by: User, /, *, outcome: str = "pass", note: str = ""
) -> CheckResult:
    """A result for the check, recorded by `by` (a supervisor records at any post)."""
    if outcome == "fail" and not note:
        note = "Not as it should be"
    return check_record(check=check, by=by, outcome=outcome, note=note)


def plan_signed_off(fixture_: Fixture, /, cast_: Cast) -> PlanVersion:
    """The plan made from the fixture's category and signed off by the safety officer and the
    police commander of the cast."""
    plan = plan_generate(fixture=fixture_, by=cast_["safety"])
    plan_sign(fixture=fixture_, by=cast_["safety"], version=plan.number)
    plan_sign(fixture=fixture_, by=cast_["police"], version=plan.number)
    return plan
