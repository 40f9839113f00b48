"""What a report needs to know besides the log itself, kept a few seconds in each process.

A report names a category and a place by code (block S-L1, zone away-se-cup); its live frame and
its flashpoint check need the match's zones (which zones a block, gate or concourse lies in) and
which zones touch which. Read from the database for every report, these cost more than the chain
itself (docs/adr/0013-the-cheap-append.md). They change a few times a season (a venue file
imported, a category edited in the admin, a fixture's zones set), so each is kept for
`SAFEGROUND_LOG_CACHE_SECONDS` (default 5): a change takes effect in every process within that
time, as the turnstiles' caches do (entry/runtime/lookups.py). Only found things are kept: an
unknown code is looked up again each time, so a category or block added a moment ago is found.
"""

from safeground.kept import Kept
from safeground.venues.models import Block, Concourse, Gate, Zone

from .models import Category

SECONDS = "SAFEGROUND_LOG_CACHE_SECONDS"
_categories = Kept(SECONDS)
_places = Kept(SECONDS)
zone_maps = Kept(SECONDS)  # fixture id -> selectors.ZoneMap
zone_neighbours = Kept(SECONDS)  # fixture id -> flashpoint's zones that touch each zone
fixtures = Kept(SECONDS)  # fixture id -> the fixture and its ground, for the flashpoint thread
STORES = (_categories, _places, zone_maps, zone_neighbours, fixtures)

PLACE_MODELS: dict[str, type[Block | Zone | Gate | Concourse]] = {
    "block": Block,
    "zone": Zone,
    "gate": Gate,
    "concourse": Concourse,
}


def category_active(code: str) -> Category | None:
    """The active category with this code, or None."""
    return _categories.get(
        ("category", code), lambda: Category.objects.filter(code=code, is_active=True).first()
    )


def place_at(ground_id: int, kind: str, code: str) -> Block | Zone | Gate | Concourse | None:
    """The ground's block, zone, gate or concourse with this code (`kind`), or None."""
    model = PLACE_MODELS[kind]
    return _places.get(
        (ground_id, kind, code), lambda: model.objects.filter(ground=ground_id, code=code).first()
    )


def forget() -> None:
    """Drop everything kept in this process (a test starting afresh, a restore)."""
    for store in STORES:
        store.clear()
