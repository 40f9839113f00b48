"""What entry tells the apps above it without importing them (safeground.hooks): the league's
exchange checks the holders of tickets as they arrive."""

from datetime import datetime

from safeground.hooks import Kind, Timing, ignored
from safeground.matches.models import Fixture

# Tickets imported or changed for a fixture have committed: (fixture, the import's time: every
# ticket it created or changed has updated_at at or after it, how many it created or changed).
tickets_arrived: Kind[[Fixture, datetime, int], None, None] = Kind(
    "entry.tickets_arrived", Timing.AFTER_COMMIT, ignored
)
