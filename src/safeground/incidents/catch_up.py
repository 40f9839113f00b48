"""What a (re)connecting socket missed, without folding the whole log again for every socket.

The log is append-only and hash-chained, so each shown entry's frame and audience, found by
`visible_log`'s rule (`incident_fold`, then `entry_audience`), never change once written. Each
process keeps one fold per fixture and extends it with the entries appended since; a catch-up is
then a filter of it by seq and by the viewer's audience. Before each use the fold is checked
against the database: the entry it ends with must still be there with the same hash (which chains
every entry before it), or the log is folded afresh; and the fixture's zone map (which decides
the zones of every entry) is read again at most every SAFEGROUND_LIVE_FIXTURE_CACHE_SECONDS, the
fold started afresh if it changed. Measured: docs/adr/0002-live-fan-out.md, Update 4.
"""

from __future__ import annotations

import bisect
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.conf import settings

from safeground.live.catalogue import LOG_ENTRY, LOG_PHOTO
from safeground.live.events import Audience, frame_json
from safeground.matches.models import Fixture

from .models import LogEntry, Photo
from .selectors import (
    IncidentState,
    ZoneMap,
    entry_audience,
    entry_event_data,
    incident_fold,
    photo_json,
    shown_entries,
    zone_map,
)

if TYPE_CHECKING:
    from safeground.live.events import Viewer

KEPT_FOLDS = 64  # fixtures per process (a league's match day)

# a kind of viewer -> the indexes of the fold's entries it sees, in order and as a set
KindSeen = dict[tuple[bool, bool, frozenset[int]], tuple[list[int], set[int]]]


@dataclass
class _Fold:
    """One fixture's log as shown, folded in seq order: each entry with its frame and audience."""

    zones: ZoneMap | None = None
    zones_read: float = float("-inf")
    states: dict[int, IncidentState] = field(default_factory=dict)
    entries: list[LogEntry] = field(default_factory=list)
    seqs: list[int] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)
    audiences: list[Audience] = field(default_factory=list)
    afters: list[IncidentState] = field(default_factory=list)  # each entry's incident just after it
    # user id -> the indexes of the entries addressed to them (their reports, their tasks), so a
    # catch-up finds a person's own without reading every audience again
    addressed: dict[int, list[int]] = field(default_factory=dict)
    last_hash: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def restart(self, zones: ZoneMap) -> None:
        self.zones = zones
        self.states, self.entries, self.seqs, self.frames, self.audiences = {}, [], [], [], []
        self.afters, self.addressed = [], {}
        self.last_hash = ""

    def add(self, entry: LogEntry, fixture_id: int) -> None:
        assert self.zones is not None
        report_id = entry.concerns_id or entry.pk
        before = self.states.get(report_id)
        after = self.states[report_id] = incident_fold(before, entry, self.zones)
        self.entries.append(entry)
        self.seqs.append(entry.seq)
        self.frames.append(
            frame_json(
                fixture_id=fixture_id,
                type=LOG_ENTRY,
                data=entry_event_data(entry, after),
                seq=entry.seq,
            )
        )
        audience = entry_audience(entry, before=before, after=after, zones=self.zones)
        for user_id in audience.user_ids:
            self.addressed.setdefault(user_id, []).append(len(self.audiences))
        self.audiences.append(audience)
        self.afters.append(after)
        self.last_hash = entry.hash


@dataclass(frozen=True)
class _Folded:
    """A fold as it stood when read: copies of its lists' current length (other threads only
    ever append after it); `addressed` and `states` are the fold's own, read bounded by it."""

    entries: list[LogEntry]
    seqs: list[int]
    frames: list[str]
    audiences: list[Audience]
    afters: list[IncidentState]
    addressed: dict[int, list[int]]
    states: dict[int, IncidentState]  # each incident as it stands now (it only gains newer states)


_folds: dict[int, _Fold] = {}
_folds_lock = threading.Lock()


def live_catch_up(
    *, fixture_id: int, wants: Sequence[tuple[Viewer, int]]
) -> list[list[tuple[int | None, str]]]:
    """For each (viewer, after seq) of sockets (re)connecting together, the frames it missed,
    filtered as live frames are: the entries after that seq it may see, then the photos of every
    entry it may see (few, and a photo may come late). The same frames `visible_log` gives, from
    the process's fold of the log, checked once and filtered once per kind of viewer."""
    fold = _fold_current(fixture_id)
    entries, seqs, frames = fold.entries, fold.seqs, fold.frames
    index = {entry.pk: i for i, entry in enumerate(entries)}
    # (the index of its entry in the fold, the photo), in the photos' order; a photo erased by
    # retention has no file to fetch, so it goes to no screen
    held = Photo.objects.filter(entry__fixture_id=fixture_id, erased_at__isnull=True)
    photos = [
        (index[photo.entry_id], photo) for photo in held.order_by("pk") if photo.entry_id in index
    ]
    photo_frames: dict[int, str] = {}
    by_kind: KindSeen = {}
    found = []
    for viewer, after_seq in wants:
        shown, visible = _seen_by(viewer, fold, by_kind)
        start = bisect.bisect_right(seqs, after_seq)
        mine: list[tuple[int | None, str]] = [
            (seqs[i], frames[i]) for i in shown[bisect.bisect_left(shown, start) :]
        ]
        for i, photo in photos:
            if i in visible:
                if photo.pk not in photo_frames:
                    data = photo_json(photo, entries[i])
                    photo_frames[photo.pk] = frame_json(
                        fixture_id=fixture_id, type=LOG_PHOTO, data=data, seq=None
                    )
                mine.append((None, photo_frames[photo.pk]))
        found.append(mine)
    return found


def log_after(
    *, fixture_id: int, viewer: Viewer, after_seq: int
) -> list[tuple[LogEntry, IncidentState]]:
    """The entries after `after_seq` this viewer may see (`visible_log`'s rule), oldest first,
    each with its incident's state as it stands now: the API's page of the log, from the
    process's fold, so a read costs the entries it returns, not the whole log folded twice (the
    soak's log reads grew slower with the match's log)."""
    fold = _fold_current(fixture_id)
    shown, _visible = _seen_by(viewer, fold, {})
    start = bisect.bisect_right(fold.seqs, after_seq)
    entries, states = fold.entries, fold.states
    return [
        (entries[i], states[entries[i].concerns_id or entries[i].pk])
        for i in shown[bisect.bisect_left(shown, start) :]
    ]


def log_seen(*, fixture_id: int, viewer: Viewer) -> list[tuple[LogEntry, IncidentState]]:
    """`visible_log` from the process's fold: the entries this viewer may see, each with its
    incident's state just after it (a steward's page, read by every phone that opens it)."""
    fold = _fold_current(fixture_id)
    shown, _visible = _seen_by(viewer, fold, {})
    return [(fold.entries[i], fold.afters[i]) for i in shown]


def _seen_by(viewer: Viewer, fold: _Folded, by_kind: KindSeen) -> tuple[list[int], set[int]]:
    """The indexes of the fold's entries this viewer sees, in order, and as a set: those its kind
    of viewer sees (filtered once per kind, kept in `by_kind`), and what is addressed to them
    beyond it (their own reports elsewhere, their tasks)."""
    if viewer.kind not in by_kind:
        of_kind = [i for i, audience in enumerate(fold.audiences) if audience.admits_kind(viewer)]
        by_kind[viewer.kind] = (of_kind, set(of_kind))
    shown, visible = by_kind[viewer.kind]
    # Indexes past the copies' length were added since, by another thread.
    named = fold.addressed.get(viewer.user_id, [])
    count = len(fold.audiences)
    extra = [i for i in named[: bisect.bisect_left(named, count)] if i not in visible]
    if extra:
        visible = visible | set(extra)
        shown = sorted(shown + extra)  # two sorted runs: merged in linear time
    return shown, visible


def folds_forget() -> None:
    """Drop every fold (tests)."""
    with _folds_lock:
        _folds.clear()


def _fold_current(fixture_id: int) -> _Folded:
    with _folds_lock:
        fold = _folds.get(fixture_id)
        if fold is None:
            if len(_folds) >= KEPT_FOLDS:
                _folds.clear()
            fold = _folds[fixture_id] = _Fold()
    with fold.lock:
        fixture = Fixture(pk=fixture_id)
        now = time.monotonic()
        if now - fold.zones_read >= settings.SAFEGROUND_LIVE_FIXTURE_CACHE_SECONDS:
            fixture = Fixture.objects.select_related("ground").get(pk=fixture_id)
            zones = zone_map(fixture)
            if zones != fold.zones:
                fold.restart(zones)
            fold.zones_read = now
        rows: list[LogEntry] = []
        if fold.seqs:
            # A light query first (the full one's joins cost ~10x to compile): usually nothing new.
            since = shown_entries(fixture).filter(seq__gte=fold.seqs[-1])
            heads = list(since.values_list("seq", "hash")[:2])
            if heads[:1] != [(fold.seqs[-1], fold.last_hash)]:
                # Not the log it was folded from (a database restored or emptied): afresh.
                assert fold.zones is not None
                fold.restart(fold.zones)
                rows = list(shown_entries(fixture))
            elif len(heads) > 1:
                rows = list(since.filter(seq__gt=fold.seqs[-1]))
        else:
            rows = list(shown_entries(fixture))
        for entry in rows:
            fold.add(entry, fixture_id)
        count = len(fold.seqs)
        return _Folded(
            entries=fold.entries[:count],
            seqs=fold.seqs[:count],
            frames=fold.frames[:count],
            audiences=fold.audiences[:count],
            afters=fold.afters[:count],
            addressed=fold.addressed,
            states=fold.states,
        )
