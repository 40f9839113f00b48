"""What entry tells the apps above it without importing them (safeground.hooks): the league's
exchange checks the holders of tickets as they arrive; a gate warning that starts is written to
the control-room log."""

from datetime import datetime

from safeground.hooks import Kind, Timing, ignored
from safeground.matches.models import Fixture

from .models import GateWarned

# Tickets imported or changed for a fixture have committed: (fixture, the import's time: every
# ticket it created or changed has updated_at at or after it, how many it created or changed).
tickets_arrived: Kind[[Fixture, datetime, int], None, None] = Kind(
    "entry.tickets_arrived", Timing.AFTER_COMMIT, ignored
)
# A gate warning (per gate and cause) has started: told once per onset, whichever process
# assessed it (services.gate_warnings_keep); not again while it stands.
gate_warned: Kind[[GateWarned], None, None] = Kind(
    "entry.gate_warned", Timing.AFTER_COMMIT, ignored
)
