"""The season's log before the cup tie, as reported of the seed case: clashes in the stands
against Watford in September, disorder against Middlesbrough on 1 October after which four
people were arrested. The risk assessment of the cup tie reads them (matches.risk). Every entry
is invented in its detail; only the matches, the dates and the four arrests are the public ones."""

from datetime import datetime
from zoneinfo import ZoneInfo

from safeground.accounts.models import User
from safeground.incidents.services import Place, log_entry_append
from safeground.matches.models import Fixture
from safeground.venues.models import Ground

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
    ("Middlesbrough", "2016-10-01 17:15", "arrest", 3, Place(concourse="E-L"), "Arrest 1 of 4"),
    ("Middlesbrough", "2016-10-01 17:16", "arrest", 3, Place(concourse="E-L"), "Arrest 2 of 4"),
    ("Middlesbrough", "2016-10-01 17:20", "arrest", 3, Place(outside="Stadium Island bridge"),
     "Arrest 3 of 4"),
    ("Middlesbrough", "2016-10-01 17:24", "arrest", 3, Place(outside="Stadium Island bridge"),
     "Arrest 4 of 4"),
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
