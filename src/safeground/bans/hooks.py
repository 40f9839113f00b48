"""What the register tells the apps above it without importing them (bans never imports entry).

Entry registers in EntryConfig.ready(): flagging tickets when a ban comes into force, clearing
the open flags of a revoked ban, and counting the flags awaiting a reviewer. Casework registers
where a ban's grounds come from (the case and its log entries), so the register shows them as
links and not as free text only. The exchange publishes again when a ban's status changes.
Retention, legal holds and subject access are not here: safeground.privacy, above every app
whose data it governs, calls each app's part by name. The mechanism is safeground.hooks.
"""

from datetime import datetime
from typing import Any

from safeground.hooks import Kind, Timing, ignored, total

from .models import Ban

# A ban has just come into force (inside its transaction): the tickets newly flagged.
ban_in_force: Kind[[Ban], int, int] = Kind("bans.ban_in_force", Timing.IN_TRANSACTION, total)
# A ban revoked on appeal (inside its transaction): (ban, by, at).
ban_revoked: Kind[[Ban, Any, datetime], None, None] = Kind(
    "bans.ban_revoked", Timing.IN_TRANSACTION, ignored
)
# A ban's status changed (inside its transaction): the league's exchange publishes again when a
# ban starts, ends, is appealed or decided.
ban_changed: Kind[[Ban], None, None] = Kind("bans.ban_changed", Timing.IN_TRANSACTION, ignored)
# (user) -> the flagged tickets awaiting this user's review, shown in the register's queue.
flags_awaiting: Kind[[Any], int, int] = Kind("bans.flags_awaiting", Timing.AT_RENDER, total)

# ban id -> the records its grounds rest on, each (what it is, its page's URL)
Sources = dict[int, list[tuple[str, str]]]


def _sources_merged(answers: list[Sources]) -> Sources:
    merged: Sources = {}
    for answer in answers:
        for ban_id, sources in answer.items():
            merged.setdefault(ban_id, []).extend(sources)
    return merged


# (ban ids) -> for each ban, the records its grounds rest on (a case and its log entries).
grounds_sources: Kind[[list[int]], Sources, Sources] = Kind(
    "bans.grounds_sources", Timing.AT_RENDER, _sources_merged
)
