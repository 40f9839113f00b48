"""What every app's retention step shares (ADR 0011): the legal holds it must leave, the counts it
returns, the day its period ends, and the one way a file is erased. The steps themselves live in
each app (`entry/retention.py`, ...); `safeground.privacy` runs them in order, daily.
"""

from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any, cast

from django.db import models
from django.utils import timezone

from safeground.append_only import ErasableQuerySet


@dataclass(frozen=True)
class Holds:
    """What open cases name, by kind: kept past retention while the case is open."""

    people: frozenset[int] = field(default_factory=frozenset)
    tickets: frozenset[int] = field(default_factory=frozenset)
    log_photos: frozenset[int] = field(default_factory=frozenset)


@dataclass(frozen=True)
class Erased:
    """One retention step's counts: what it erases, how many, how many held by an open case.
    `after` and `held_by` word the command's line for a step counted otherwise (evidence)."""

    what: str
    days: int
    erased: int
    held: int
    after: str = "after the match"
    held_by: str = "by an open case"


def cutoff(today: date, days: int) -> datetime:
    """The start (London's midnight) of the day `days` before today: what happened before it is
    past the period. A step counting in days (a ban's end) compares with its `.date()`."""
    return timezone.make_aware(datetime.combine(today - timedelta(days=days), time.min))


def file_erase(row: models.Model, file_field: str, erased_field: str, at: datetime) -> None:
    """Delete a row's file and mark the row: the file field blanked, `erased_field` set to `at`.
    Through `erase()`, so the model must name both columns `erasable`: nothing else of the row
    changes (an append-only record's triggers refuse any other column), its SHA-256 stays."""
    stored = getattr(row, file_field)
    if stored:
        stored.delete(save=False)
    rows = cast(ErasableQuerySet[Any], type(row)._default_manager.filter(pk=row.pk))
    rows.erase(**{file_field: "", erased_field: at})
