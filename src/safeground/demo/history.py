"""The season's record, as reported of the seed case: clashes in the stands against Watford in
September, disorder against Middlesbrough on 1 October after which four people were arrested
(the log before the cup tie, which its risk assessment reads: matches.risk), and the cup tie's
own night, seven arrests and 30 prevented from attending. Every entry is invented in its detail;
only the matches, the dates and the figures are the public ones."""

import random
import uuid
from dataclasses import replace
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from django.utils import timezone

from safeground.accounts.models import User
from safeground.casework.models import Outcome
from safeground.casework.selectors import arrest_defaults
from safeground.casework.services import arrest_record
from safeground.entry.models import Ticket
from safeground.entry.runtime import lookups
from safeground.entry.scans import scan_decide
from safeground.entry.services import ticket_cancel
from safeground.incidents.models import LogEntry
from safeground.incidents.services import Place, log_entry_append
from safeground.matches.models import Fixture
from safeground.venues.models import Ground, Turnstile

from .arrival import NAMESPACE, SEED, arrival_device, device_info
from .replay import replay, scenario_load

LONDON = ZoneInfo("Europe/London")

# (opponent, local time observed, category, severity, place, text)
ENTRIES = [
    ("Watford", "2016-09-10 15:35", "disorder", 3, Place(block="E-L8"),
     "Clashes in the stands between home supporters over standing"),
    ("Watford", "2016-09-10 16:10", "disorder", 4, Place(block="E-L9"),
     "Clashes in the stands again, punches thrown, stewards moving in"),
    ("Watford", "2016-09-10 16:40", "disorder", 4, Place(block="E-L8"),
     "Fighting near the buffer after the third goal"),
    ("Middlesbrough", "2016-10-01 16:55", "disorder", 4, Place(concourse="E-L"),
     "Disorder on the east lower concourse at full time"),
    ("Middlesbrough", "2016-10-01 17:05", "missile", 3, Place(concourse="E-L"),
     "Bottles thrown on the concourse"),
    ("Middlesbrough", "2016-10-01 17:15", "arrest", 3, Place(concourse="E-L"),
     "Arrest 1 of 4: public order offence"),
    ("Middlesbrough", "2016-10-01 17:16", "arrest", 3, Place(concourse="E-L"),
     "Arrest 2 of 4: throwing a missile"),
    ("Middlesbrough", "2016-10-01 17:20", "arrest", 3, Place(outside="Stadium Island bridge"),
     "Arrest 3 of 4: public order offence"),
    ("Middlesbrough", "2016-10-01 17:24", "arrest", 3, Place(outside="Stadium Island bridge"),
     "Arrest 4 of 4: public order offence"),
]  # fmt: skip


def history_demo_load(*, ground: Ground, author: User) -> None:
    for opponent, observed, category, severity, place, text in ENTRIES:
        log_entry_append(
            fixture=Fixture.objects.get(ground=ground, away_club__name=opponent),
            author=author,
            category=category,
            severity=severity,
            place=place,
            text=text,
            observed_at=datetime.strptime(observed, "%Y-%m-%d %H:%M").replace(tzinfo=LONDON),
        )


# --- the cup tie's night -------------------------------------------------------------------------

# What the police said of the night (shared/domain/london-derby-2016.md): seven arrests for public
# order offences, and 30 people prevented from attending. The 30 are refusals at the turnstiles:
# the eight holders flagged against the register on import (held for ID, never admitted) and the
# rest tickets the club cancelled before the match.
PREVENTED = 30
CANCELLED_REASON = "Cancelled before the match: bought for a supporter the police had named"


def cup_tie_night_load(cup_tie: Fixture) -> None:
    """The cup tie's figures recorded as the night left them: its seven arrests and the surge in
    the log and its 30 refusals at the turnstiles. The entries are the seed scenario's own, by the
    same authors with the same idempotency keys: `safeground replay seed` finds them stored and
    plays the rest of the night around them, and the match still has seven."""
    scenario = scenario_load("seed")
    # With the surge the riot police were sent in for, which the commander's decision links.
    night = [
        spec
        for spec in scenario.entries
        if spec.get("category") == "arrest" or spec.get("ref") == "surge"
    ]
    replay(replace(scenario, posts=[], entries=night), fixture=cup_tie, speed=0)
    _turned_away(cup_tie)


def arrests_recorded(ground: Ground) -> None:
    """Every arrest in the demo's log recorded in a case, as the police's return would have it:
    the offence group the entry's words give, the force policing the match, a reference; whose
    supporter each was is not in the story, so not known."""
    police = User.objects.get(username="police")
    arrests = LogEntry.objects.filter(
        fixture__ground=ground, kind=LogEntry.Kind.REPORT, category__code="arrest"
    ).select_related("fixture", "category")
    for entry in arrests.order_by("fixture__kickoff", "seq"):
        defaults = arrest_defaults(entry)
        arrest_record(
            entry=entry,
            by=police,
            home_office_offence=defaults["home_office_offence"],
            club=Outcome.Club.NOT_KNOWN,
            force=defaults["force"],
            reference=f"DEMO/{timezone.localdate(entry.fixture.kickoff):%Y%m%d}/{entry.seq}",
        )


def _turned_away(cup_tie: Fixture) -> None:
    """The flagged holders and the cancelled tickets, each refused once before kick-off through
    the turnstiles' own decision (entry.scans.scan_decide). No tickets (SAFEGROUND_DEMO_TICKETS
    "none"): nobody to turn away."""
    tickets = Ticket.objects.filter(fixture=cup_tie).order_by("pk")
    flagged = list(tickets.filter(flags__isnull=False).distinct())
    others = list(tickets.filter(flags__isnull=True))
    if not flagged and not others:
        return
    rng = random.Random(SEED)
    cancelled = rng.sample(others, max(0, min(PREVENTED - len(flagged), len(others))))
    for ticket in cancelled:
        ticket_cancel(ticket=ticket, reason=CANCELLED_REASON)
    device = device_info(arrival_device(cup_tie))
    lookups.caches_clear()  # nothing the gates cached before names this ground's new ids
    turnstiles = Turnstile.objects.filter(gate__ground=cup_tie.ground).order_by("code")
    for n, ticket in enumerate(sorted(flagged + cancelled, key=lambda t: t.pk)):
        at = cup_tie.kickoff - timedelta(minutes=rng.uniform(5, 60))
        turnstile = turnstiles.filter(gate__blocks=ticket.block_id).first() or turnstiles.first()
        assert turnstile is not None, f"{cup_tie.ground} has no turnstiles"
        scan_decide(
            device=device,
            turnstile=turnstile.code,
            barcode=ticket.barcode,
            scanned_at=at,
            nonce=uuid.uuid5(NAMESPACE, f"night:{cup_tie.pk}:{n}"),
            now=at,
        )
    # The load is one transaction: should it roll back, the ids the gates cached go with it.
    lookups.caches_clear()
