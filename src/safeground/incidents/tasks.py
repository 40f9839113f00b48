"""The anchoring job: sign the head of every log left unsigned too long, and at full time
(checkpoints.heads_due). It runs every minute (SAFEGROUND_PERIODIC_TASKS, live/schedule.py): in
the server's own thread in the default install, in `safeground worker` with a database queue, or
from cron as `safeground checkpoint --due` (docs/deploy.md)."""

import logging
from datetime import datetime

from django.db import DatabaseError
from django.tasks import task
from django.utils import timezone

from safeground.matches.models import Fixture

from .checkpoints import heads_due
from .models import LogCheckpoint
from .services import LogEntryError, log_checkpoint_make

logger = logging.getLogger(__name__)


def log_heads_anchor(*, now: datetime | None = None) -> list[LogCheckpoint]:
    """Sign each head due at `now`; one query when none is. Each log in its own transaction
    under its chain's lock, so an append waits no longer than one signature, and a log that
    fails (its entries removed meanwhile, a lock timeout) does not keep the others unsigned."""
    due = heads_due(now=now or timezone.now())
    if not due:
        return []
    fixtures = Fixture.objects.select_related("home_club", "away_club").in_bulk(
        [head.fixture_id for head in due]
    )
    made = []
    for head in due:
        try:
            made.append(log_checkpoint_make(fixture=fixtures[head.fixture_id], reason=head.reason))
        except (LogEntryError, DatabaseError):
            logger.exception("fixture %s: could not sign the log's head", head.fixture_id)
    return made


@task
def log_heads_anchor_task() -> dict[str, list[int]]:
    made = log_heads_anchor()
    return {"signed": [checkpoint.fixture_id for checkpoint in made]}
