"""The football season, once: the season a day falls in, its first and last day. It starts on
the risk policy's `season_starts` (1 July in the default policy, as the English leagues' seasons
do); the risk score's "this season", the season dashboard's matches and its bans all read it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from .policy import policy_current


@dataclass(frozen=True)
class Season:
    start: date
    end: date  # its last day: the day before the next one starts

    @property
    def label(self) -> str:
        """As people write it: 2016/17."""
        return f"{self.start.year}/{(self.start.year + 1) % 100:02d}"

    @property
    def key(self) -> str:
        """In a link: the year it starts (2016)."""
        return str(self.start.year)


def season_of(day: date, starts: tuple[int, int] | None = None) -> Season:
    """The season `day` falls in; `starts` (month, day) is the policy's unless given."""
    month, first = starts or season_starts()
    start = date(day.year, month, first)
    if start > day:
        start = date(day.year - 1, month, first)
    return Season(start, date(start.year + 1, month, first) - timedelta(days=1))


def season_starts() -> tuple[int, int]:
    """(month, day) the season starts on: the risk policy's `season_starts`."""
    return policy_current().season_starts
