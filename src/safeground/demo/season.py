"""The demo: the home club's first season at its new ground, up to the cup tie of the seed case.

Dates and competitions are the real ones (see shared/domain/london-derby-2016.md); every person is
fictional. The ground is an approximate layout, labelled so wherever it is drawn.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from safeground.accounts.models import Organisation, Role, User
from safeground.accounts.services import organisation_create, user_create
from safeground.entry.services import tickets_write
from safeground.incidents.services import categories_seed
from safeground.matches.models import Fixture, FixtureShare, FixtureZone
from safeground.matches.services import club_ensure, competition_ensure, fixture_create
from safeground.venues.models import Ground
from safeground.venues.services import venue_import

from .decisions import cup_tie_decisions_load
from .history import arrests_recorded, cup_tie_night_load, history_demo_load
from .register import cup_tie_tickets, register_demo_load

DEMO_GROUND_FILE = Path(__file__).resolve().parents[1] / "venues" / "demo" / "london-stadium.yaml"
DEMO_PASSWORD = "matchday-demo"
LONDON = ZoneInfo("Europe/London")

HOME_ORG = "West Ham United"
POLICE_ORG = "Metropolitan Police Service"
AWAY_ORG = "Chelsea FC"
NATIONAL_ORG = "UK Football Policing Unit"


@dataclass(frozen=True)
class DemoLogin:
    username: str
    first_name: str
    last_name: str
    organisation: str
    role: str


LOGINS = [
    DemoLogin("safety", "Jo", "Calder", HOME_ORG, Role.SAFETY_OFFICER),
    DemoLogin("loggist", "Priya", "Nandra", HOME_ORG, Role.CONTROL_OPERATOR),
    DemoLogin("supervisor", "Tom", "Reeve", HOME_ORG, Role.STEWARD_SUPERVISOR),
    DemoLogin("steward", "Kim", "Ashby", HOME_ORG, Role.STEWARD),
    DemoLogin("banofficer", "Lee", "Harte", HOME_ORG, Role.BAN_OFFICER),
    DemoLogin("auditor", "Morgan", "Vale", HOME_ORG, Role.AUDITOR),
    DemoLogin("police", "Chris", "Dunmore", POLICE_ORG, Role.POLICE_COMMANDER),
    DemoLogin("spotter", "Ravi", "Stone", POLICE_ORG, Role.POLICE_SPOTTER),
    DemoLogin("liaison", "Sam", "Keel", AWAY_ORG, Role.SAFETY_OFFICER),
    # A second ban officer: decides appeals on bans that banofficer proposed and safety approved.
    DemoLogin("security", "Dana", "Whitlow", HOME_ORG, Role.BAN_OFFICER),
]

LEAGUE_LAYOUT = {
    "home-north": "home",
    "home-east": "home",
    "home-south": "home",
    "home-west": "home",
    "home-se-flex": "home",
    "away-se": "away",
    "buffer-se-east": "buffer",
    "buffer-se-south": "buffer",
}
CUP_TIE_LAYOUT = {
    "home-north": "home",
    "home-east": "home",
    "home-south": "home",
    "home-west": "home",
    "away-se-cup": "away",
    "buffer-se-cup-east": "buffer",
    "buffer-se-cup-south": "buffer",
}

# (local kick-off, opponent, competition, stage, away allocation)
SEASON = [
    (
        "2016-08-04 19:45",
        "NK Domžale",
        "UEFA Europa League",
        "Third qualifying round, 2nd leg",
        1000,
    ),
    ("2016-08-21 16:00", "AFC Bournemouth", "Premier League", "", 3000),
    ("2016-08-25 19:45", "FC Astra Giurgiu", "UEFA Europa League", "Play-off round, 2nd leg", 1000),
    ("2016-09-10 15:00", "Watford", "Premier League", "", 3000),
    ("2016-09-21 19:45", "Accrington Stanley", "EFL Cup", "Third round", 3000),
    ("2016-09-25 16:30", "Southampton", "Premier League", "", 3000),
    ("2016-10-01 15:00", "Middlesbrough", "Premier League", "", 3000),
    ("2016-10-22 15:00", "Sunderland", "Premier League", "", 3000),
    ("2016-10-26 19:45", "Chelsea", "EFL Cup", "Fourth round", 5000),
]
CUP_TIE_OPPONENT = "Chelsea"
# The cup tie played again a few hours after the demo is loaded, so that a scanner pairs, scans
# and the gates fill today. Its barcodes are the cup tie's with this prefix.
RERUN_STAGE = "Fourth round (demo rerun, today)"
RERUN_BARCODES = "RERUN-"
RERUN_HOURS = 3


def demo_is_loaded() -> bool:
    return Organisation.objects.filter(name=HOME_ORG).exists()


@transaction.atomic
def demo_load() -> Ground:
    categories_seed()
    orgs = {
        HOME_ORG: organisation_create(name=HOME_ORG, kind=Organisation.Kind.CLUB),
        POLICE_ORG: organisation_create(name=POLICE_ORG, kind=Organisation.Kind.POLICE_FORCE),
        AWAY_ORG: organisation_create(name=AWAY_ORG, kind=Organisation.Kind.CLUB),
        NATIONAL_ORG: organisation_create(name=NATIONAL_ORG, kind=Organisation.Kind.NATIONAL_UNIT),
    }
    for login in LOGINS:
        user_create(
            username=login.username,
            password=DEMO_PASSWORD,
            organisation=orgs[login.organisation],
            role=login.role,
            first_name=login.first_name,
            last_name=login.last_name,
        )
    ground = venue_import(path=DEMO_GROUND_FILE, organisation=orgs[HOME_ORG])
    home = club_ensure(name="West Ham United", short_name="West Ham", organisation=orgs[HOME_ORG])
    for kickoff, opponent, competition, stage, allocation in SEASON:
        cup_tie = opponent == CUP_TIE_OPPONENT
        shares = {orgs[POLICE_ORG]: FixtureShare.Purpose.POLICE}
        if cup_tie:
            shares[orgs[AWAY_ORG]] = FixtureShare.Purpose.AWAY_CLUB
        fixture_create(
            ground=ground,
            home_club=home,
            away_club=club_ensure(name=opponent, organisation=orgs[AWAY_ORG] if cup_tie else None),
            competition=competition_ensure(name=competition),
            stage=stage,
            kickoff=datetime.strptime(kickoff, "%Y-%m-%d %H:%M").replace(tzinfo=LONDON),
            away_allocation=allocation,
            zones={
                code: FixtureZone.Use(use)
                for code, use in (CUP_TIE_LAYOUT if cup_tie else LEAGUE_LAYOUT).items()
            },
            shares=shares,
        )
    register_demo_load(organisation=orgs[HOME_ORG], ground=ground)
    if settings.SAFEGROUND_DEMO_HISTORY:
        history_demo_load(ground=ground, author=User.objects.get(username="loggist"))
        cup_tie_night_load(Fixture.objects.get(ground=ground, stage="Fourth round"))
        cup_tie_decisions_load(Fixture.objects.get(ground=ground, stage="Fourth round"))
        arrests_recorded(ground)
    return ground


def rerun_kickoff(now: datetime | None = None) -> datetime:
    """A few hours from now, on the quarter hour: inside the scanners' entry window at once."""
    later = (now or timezone.now()) + timedelta(hours=RERUN_HOURS)
    return later.replace(minute=later.minute - later.minute % 15, second=0, microsecond=0)


def rerun_find() -> Fixture | None:
    return Fixture.objects.filter(stage=RERUN_STAGE, ground__code="london-stadium").first()


@transaction.atomic
def rerun_load() -> Fixture:
    """The cup tie again, kicking off a few hours from now: its layout, shares and tickets."""
    orgs = {org.name: org for org in Organisation.objects.filter(name__in=[POLICE_ORG, AWAY_ORG])}
    cup_tie = Fixture.objects.get(away_club__name=CUP_TIE_OPPONENT, stage="Fourth round")
    rerun = fixture_create(
        ground=cup_tie.ground,
        home_club=cup_tie.home_club,
        away_club=cup_tie.away_club,
        competition=cup_tie.competition,
        stage=RERUN_STAGE,
        kickoff=rerun_kickoff(),
        away_allocation=cup_tie.away_allocation,
        zones={code: FixtureZone.Use(use) for code, use in CUP_TIE_LAYOUT.items()},
        shares={
            orgs[POLICE_ORG]: FixtureShare.Purpose.POLICE,
            orgs[AWAY_ORG]: FixtureShare.Purpose.AWAY_CLUB,
        },
    )
    if settings.SAFEGROUND_DEMO_TICKETS != "none":
        per_block = 2 if settings.SAFEGROUND_DEMO_TICKETS == "sample" else None
        rows = [
            row._replace(barcode=RERUN_BARCODES + row.barcode.split("-", 1)[1])
            for row in cup_tie_tickets(rerun, seats_per_block=per_block)
        ]
        tickets_write(fixture=rerun, rows=rows)
    return rerun


def rerun_move_to_today() -> Fixture | None:
    """A demo loaded on an earlier day: its rerun kicks off a few hours from now again (its
    entry window had closed), so `make run` always has a match the scanners can pair with."""
    rerun = rerun_find()
    closes = timedelta(hours=float(settings.SAFEGROUND_ENTRY_CLOSES_HOURS))
    if rerun is None or rerun.kickoff + closes > timezone.now():
        return None
    rerun.kickoff = rerun_kickoff()
    rerun.save(update_fields=["kickoff"])
    return rerun
