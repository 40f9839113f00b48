"""Reads of the control-room log: entries, incidents' derived state, what each viewer may see."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from django.contrib.auth import get_user_model
from django.db.models import Q, QuerySet
from django.urls import reverse
from django.utils.translation import gettext as _

from safeground import clock
from safeground.accounts.permissions import (
    can_read_checkpoints,
    is_home_staff,
    require,
    role_holders,
)
from safeground.languages import in_every_language
from safeground.live.events import Audience
from safeground.matches.models import Fixture, FixtureZone
from safeground.matches.selectors import fixture_for
from safeground.venues.models import Concourse, Gate, ZoneBlock

from . import places
from .models import Category, LogCheckpoint, LogEntry, Photo

if TYPE_CHECKING:
    from safeground.live.events import Viewer

RELATED = ["category", "block", "zone", "gate", "concourse", "assignee", "concerns"]
# What counts as an incident in every figure (the match report's count and map, the season's),
# once: a report of something that happened. Not a decision or debrief note (category "decision":
# a record), nor an arrest or an ejection (an outcome of an incident, counted apart as such).
NOT_INCIDENT_CATEGORIES = ("decision", "arrest", "ejection")
# Entries that start an incident of their own; every other kind acts on one of these.
INCIDENT_KINDS = {LogEntry.Kind.REPORT, LogEntry.Kind.WARNING}
# Chained records (a broadcast, a steward's post, a photo's hash): in the chain so checkpoints
# anchor them, never in the log as it is shown (each has its own page, event and audience).
RECORD_KINDS = {
    LogEntry.Kind.BROADCAST,
    LogEntry.Kind.POST,
    LogEntry.Kind.PHOTO,
    LogEntry.Kind.DECISION,  # the decision log's own page and audience (decisions app)
    LogEntry.Kind.DECISION_REVIEW,
    LogEntry.Kind.MAJOR_INCIDENT,  # the M/ETHANE page (decisions app)
}


@dataclass(frozen=True)
class IncidentState:
    """A report as it stands now, after every assignment, escalation, status and correction."""

    id: int
    seq: int
    kind: str  # report, or warning (from the flashpoint service)
    status: str
    category: str
    category_name: str
    severity: int | None
    text: str
    place: str
    block: str
    place_names: dict[str, str] = field(default_factory=dict)  # place in other languages
    zone_ids: list[int] = field(default_factory=list)
    assignee: str = ""
    assignee_username: str = ""
    assignee_id: int | None = None
    escalated_to: str = ""
    task: str = ""  # the assignee's word: accepted / done
    links: list[int] = field(default_factory=list)
    updated_seq: int = 0
    observed_at: str = ""


def place_label(entry: LogEntry) -> str:
    """Where the entry happened, with the ground's names in the reader's language."""
    parts = []
    if entry.block_id:
        rows = ""
        if entry.first_row:
            rows = f", row {entry.first_row}"
            if entry.last_row and entry.last_row != entry.first_row:
                rows = f", rows {entry.first_row}–{entry.last_row}"
        parts.append(f"Block {entry.block.code}{rows}")  # type: ignore[union-attr]
    if entry.zone_id:
        parts.append(entry.zone.local_name)  # type: ignore[union-attr]
    if entry.gate_id:
        parts.append(entry.gate.local_name)  # type: ignore[union-attr]
    if entry.concourse_id:
        parts.append(entry.concourse.local_name)  # type: ignore[union-attr]
    if entry.outside:
        parts.append(f"Outside: {entry.outside}")
    return " · ".join(parts)


def place_labels(entry: LogEntry) -> tuple[str, dict[str, str]]:
    """The place in English and in the other languages its names differ in, for a live frame
    (one frame for every reader; the screen picks its language)."""
    if not (entry.zone_id or entry.gate_id or entry.concourse_id):
        return place_label(entry), {}
    return in_every_language(lambda: place_label(entry))


def incident_fold(state: IncidentState | None, entry: LogEntry, zones: ZoneMap) -> IncidentState:
    """Fold one entry into the state of the incident it concerns (no query for an entry just
    written: its related objects are the ones it was made with)."""
    if entry.kind in INCIDENT_KINDS or state is None:
        warning = entry.kind == LogEntry.Kind.WARNING
        # A warning is a flashpoint's (at a zone) or a gate's (at a gate: entry's gate pressure).
        at_gate = warning and entry.gate_id is not None and entry.zone_id is None
        place, place_names = place_labels(entry)
        return IncidentState(
            id=entry.pk,
            seq=entry.seq,
            kind=entry.kind,
            status=LogEntry.Status.OPEN,
            category=(
                entry.category.code
                if entry.category
                else ("gate" if at_gate else "flashpoint")
                if warning
                else ""
            ),
            category_name=(
                entry.category.name
                if entry.category
                else (_("Gate warning") if at_gate else _("Flashpoint warning"))
                if warning
                else ""
            ),
            links=list(entry.links),
            severity=entry.severity,
            text=entry.text,
            place=place,
            place_names=place_names,
            block=entry.block.code if entry.block else "",
            zone_ids=entry_zone_ids(entry, zones),
            updated_seq=entry.seq,
            observed_at=clock.iso(entry.observed_at),
        )
    changes: dict[str, Any] = {"updated_seq": entry.seq}
    if entry.status:
        changes["status"] = entry.status
    if entry.kind == LogEntry.Kind.ASSIGNMENT and entry.assignee:
        changes["assignee"] = str(entry.assignee)
        changes["assignee_username"] = entry.assignee.username
        changes["assignee_id"] = entry.assignee_id
        changes["task"] = ""
    if entry.kind == LogEntry.Kind.TASK:
        changes["task"] = entry.task
    if entry.kind == LogEntry.Kind.ESCALATION:
        changes["escalated_to"] = entry.escalated_to
    if entry.kind == LogEntry.Kind.CORRECTION:
        if entry.text:
            changes["text"] = entry.text
        if entry.category:
            changes["category"] = entry.category.code
            changes["category_name"] = entry.category.name
        if entry.severity:
            changes["severity"] = entry.severity
        place, place_names = place_labels(entry)
        if place:
            changes["place"] = place
            changes["place_names"] = place_names
            changes["block"] = entry.block.code if entry.block else ""
            changes["zone_ids"] = entry_zone_ids(entry, zones)
    return replace(state, **changes)


@dataclass(frozen=True)
class ZoneMap:
    """Which of the fixture's zones each place of the ground lies in: a block's own zones, and
    for a gate or a concourse the zones of the blocks it serves."""

    names: dict[int, str]  # every zone the fixture uses -> its name
    blocks: dict[int, frozenset[int]]
    gates: dict[int, frozenset[int]]
    concourses: dict[int, frozenset[int]]

    def zone_ids(
        self,
        *,
        block_id: int | None,
        zone_id: int | None,
        gate_id: int | None,
        concourse_id: int | None,
    ) -> set[int]:
        found = set(self.blocks.get(block_id, ())) if block_id else set()
        if zone_id:
            found.add(zone_id)
        if gate_id:
            found |= self.gates.get(gate_id, frozenset())
        if concourse_id:
            found |= self.concourses.get(concourse_id, frozenset())
        return found


def zone_map(fixture: Fixture) -> ZoneMap:
    """The fixture's ZoneMap: four queries, kept on the fixture object and for a few seconds in
    the process (places.py), so an append, its event and its flashpoint check read it once."""
    cached: ZoneMap | None = getattr(fixture, "_zone_map", None)
    if cached is None:
        cached = places.zone_maps.get(fixture.pk, lambda: _zone_map_read(fixture))
        fixture._zone_map = cached  # type: ignore[attr-defined]
    return cached


def _zone_map_read(fixture: Fixture) -> ZoneMap:
    names = dict(FixtureZone.objects.filter(fixture=fixture).values_list("zone_id", "zone__name"))
    blocks: dict[int, set[int]] = {}
    for block_id, zone_id in ZoneBlock.objects.filter(zone_id__in=list(names)).values_list(
        "block_id", "zone_id"
    ):
        blocks.setdefault(block_id, set()).add(zone_id)
    served: dict[str, dict[int, set[int]]] = {"gate": {}, "concourse": {}}
    for kind, through in (("gate", Gate.blocks.through), ("concourse", Concourse.blocks.through)):
        rows = through.objects.filter(**{f"{kind}__ground": fixture.ground_id}).values_list(
            f"{kind}_id", "block_id"
        )
        for place_id, block_id in rows:
            served[kind].setdefault(place_id, set()).update(blocks.get(block_id, ()))
    return ZoneMap(
        names=names,
        blocks={block: frozenset(zones) for block, zones in blocks.items()},
        gates={gate: frozenset(zones) for gate, zones in served["gate"].items()},
        concourses={place: frozenset(zones) for place, zones in served["concourse"].items()},
    )


def entry_zone_ids(entry: LogEntry, zones: ZoneMap) -> list[int]:
    return sorted(
        zones.zone_ids(
            block_id=entry.block_id,
            zone_id=entry.zone_id,
            gate_id=entry.gate_id,
            concourse_id=entry.concourse_id,
        )
    )


def incident_state(report: LogEntry, zones: ZoneMap | None = None) -> IncidentState:
    zones = zone_map(report.fixture) if zones is None else zones
    state = incident_fold(None, report, zones)
    for action in report.actions.select_related(*RELATED).order_by("seq"):
        state = incident_fold(state, action, zones)
    return state


def entry_json(entry: LogEntry) -> dict[str, Any]:
    place, place_names = place_labels(entry)
    return {
        "id": entry.pk,
        "seq": entry.seq,
        "kind": entry.kind,
        "concerns": entry.concerns.seq if entry.concerns else None,
        "observed_at": clock.iso(entry.observed_at),
        "logged_at": clock.iso(entry.logged_at),
        # How far the device's clock was behind the server's when it sent (ahead: negative),
        # in seconds; None when it did not say (ADR 0026).
        "device_offset_s": (
            round((entry.logged_at - entry.device_sent_at).total_seconds())
            if entry.device_sent_at
            else None
        ),
        "author": entry.author_name,
        "author_role": entry.author_role,
        "place": place,
        "place_names": place_names,
        "block": entry.block.code if entry.block else "",
        "category": entry.category.code if entry.category else "",
        "category_name": entry.category.name if entry.category else "",
        "severity": entry.severity,
        "text": entry.text,
        "note": entry.note,
        "status": entry.status,
        "assignee": str(entry.assignee) if entry.assignee else "",
        "escalated_to": entry.escalated_to,
        "task": entry.task,
        "links": entry.links,
        "hash": entry.hash,
    }


def entry_event_data(entry: LogEntry, state: IncidentState) -> dict[str, Any]:
    """The `log.entry` event: the entry itself and its incident as it stands after it."""
    return {"entry": entry_json(entry), "incident": asdict(state)}


def addressed_to(before: IncidentState | None, after: IncidentState | None) -> set[int]:
    """Who an entry on an incident is addressed to: whoever has the task, before and after it
    (so a reassigned or closed task leaves the old assignee's phone too)."""
    held = {before.assignee_id if before else None, after.assignee_id if after else None}
    return {user_id for user_id in held if user_id is not None}


def entry_audience(
    entry: LogEntry,
    *,
    before: IncidentState | None = None,
    after: IncidentState | None = None,
    zones: ZoneMap | None = None,
) -> Audience:
    """Who may see a log entry: THE visibility rule of the log, for the socket's fan-out and
    catch-up, the REST log, the steward page and photos alike.

    An entry concerns its incident's zones (an action, those of the report it acts on): a
    steward sees it when their post lies in one of them, or when it is addressed to them (the
    task is theirs, `before` or `after` the entry); the control room and the police see every
    entry; a home-only entry stays with the home club's staff. Whoever wrote an entry sees it,
    and whoever wrote a report sees every entry on it (what a steward posted in its zone sees:
    what was done about it), whatever their post: it is addressed to them too."""
    report = entry.concerns if entry.concerns_id else entry
    assert report is not None
    zones = zone_map(report.fixture) if zones is None else zones
    return Audience(
        home_only=report.home_only,
        zone_ids=frozenset(entry_zone_ids(report, zones)) or None,
        user_ids=frozenset(addressed_to(before, after) | authors_of(entry, report)),
    )


def incidents_reported(fixture_ids: Collection[int]) -> QuerySet[LogEntry]:
    """The incidents reported at these matches: reports not in NOT_INCIDENT_CATEGORIES."""
    return LogEntry.objects.filter(fixture_id__in=fixture_ids, kind=LogEntry.Kind.REPORT).exclude(
        category__code__in=NOT_INCIDENT_CATEGORIES
    )


def home_only_entries() -> Q:
    """The log's home-only rule (entry_audience's) as a query: a home-only report and every entry
    on it are for the home club's staff alone (accounts.permissions.is_home_staff), in casework,
    reports and exports as in the log. An action carries its report's flag
    (incidents.services._action); the report's own is read too, as entry_audience reads it."""
    return Q(home_only=True) | Q(concerns__home_only=True)


def entries_seen_by(user: Any, fixture: Fixture, entries: QuerySet[LogEntry]) -> QuerySet[LogEntry]:
    """`entries` (of this fixture) but those the home-only rule keeps from this user."""
    return entries if is_home_staff(user, fixture) else entries.exclude(home_only_entries())


def authors_of(entry: LogEntry, report: LogEntry) -> set[int]:
    """Who wrote the entry and the report it concerns (ids on the rows already read: no query).
    The flashpoint service's warnings have no author."""
    return {user_id for user_id in (entry.author_id, report.author_id) if user_id is not None}


def shown_entries(fixture: Fixture) -> QuerySet[LogEntry]:
    """The log as shown: every entry but the chained records."""
    return (
        LogEntry.objects.filter(fixture=fixture)
        .exclude(kind__in=RECORD_KINDS)
        .select_related(*RELATED)
        .order_by("seq")
    )


def visible_log(fixture: Fixture, viewer: Viewer) -> list[tuple[LogEntry, IncidentState]]:
    """The entries this viewer may see, in order, each with its incident's state just after it."""
    zones = zone_map(fixture)
    states: dict[int, IncidentState] = {}
    seen = []
    for entry in shown_entries(fixture):
        report_id = entry.concerns_id or entry.pk
        before = states.get(report_id)
        after = states[report_id] = incident_fold(before, entry, zones)
        if entry_audience(entry, before=before, after=after, zones=zones).admits(viewer):
            seen.append((entry, after))
    return seen


def logged_entry_audience(entry: LogEntry) -> Audience:
    """Who may see an entry already in the log (as visible_log decides): its incident is
    replayed up to it, for whom it was addressed to."""
    report = entry.concerns if entry.concerns_id else entry
    assert report is not None
    zones = zone_map(entry.fixture)
    before, after = None, incident_fold(None, report, zones)
    if entry.pk != report.pk:
        actions = report.actions.select_related(*RELATED).filter(seq__lte=entry.seq)
        for action in actions.order_by("seq"):
            before, after = after, incident_fold(after, action, zones)
    return entry_audience(entry, before=before, after=after, zones=zones)


def photo_json(photo: Photo, entry: LogEntry) -> dict[str, Any]:
    """The `log.photo` event: a photo of an entry, and where those who may see it fetch it."""
    url = reverse("api:log_photo_file", args=[entry.fixture_id, entry.pk, photo.pk])
    return {
        "entry": entry.pk,
        "seq": entry.seq,
        "photo": photo.pk,
        "sha256": photo.sha256,
        "url": url,
    }


def viewer_zone_ids(users: Sequence[Any], fixture: Fixture) -> dict[int, frozenset[int]]:
    """user id -> the zones they work in at this match: those of their current steward post
    (live's viewers; the posts of all of them in one query, as `current_posts` finds them)."""
    from .models import StewardPost

    posts = StewardPost.objects.filter(fixture=fixture, steward_id__in=[u.pk for u in users])
    latest = {
        row[0]: row
        for row in posts.order_by("assigned_at", "pk").values_list(
            "steward_id", "zone_id", "gate_id", "concourse_id"
        )
    }
    return {
        steward: _zones_covered(fixture, zone_id, gate_id, concourse_id)
        for steward, zone_id, gate_id, concourse_id in latest.values()
    }


def categories() -> QuerySet[Category]:
    return Category.objects.filter(is_active=True)


def assignable_people(fixture: Fixture) -> list[dict[str, str]]:
    """Stewards and supervisors of the home club, for the assign action."""
    from safeground.accounts.models import Role

    members = role_holders(
        fixture.ground.organisation_id, Role.STEWARD, Role.STEWARD_SUPERVISOR
    ).order_by("role", "user__last_name")
    return [
        {"username": m.user.username, "label": f"{m.user} ({m.get_role_display()})"}
        for m in members
    ]


def post_label(post: Any) -> str:
    place = post.zone or post.gate or post.concourse
    return str(place)


def steward_post(fixture: Fixture, user: Any) -> Any:
    """The steward's current post for this match, or None."""
    from .models import StewardPost

    return (
        StewardPost.objects.filter(fixture=fixture, steward=user)
        .select_related("zone", "gate", "concourse")
        .order_by("-assigned_at", "-pk")
        .first()
    )


def post_zone_ids(fixture: Fixture, post: Any) -> frozenset[int]:
    """The fixture's zones a post covers: its zone, or the zones of the blocks its gate or
    concourse serves (what a steward there sees live)."""
    if post is None:
        return frozenset()
    return _zones_covered(fixture, post.zone_id, post.gate_id, post.concourse_id)


def _zones_covered(
    fixture: Fixture, zone_id: int | None, gate_id: int | None, concourse_id: int | None
) -> frozenset[int]:
    if zone_id:
        return frozenset({zone_id})
    zones = zone_map(fixture)
    return frozenset(
        zones.zone_ids(block_id=None, zone_id=None, gate_id=gate_id, concourse_id=concourse_id)
    )


def current_posts(fixture: Fixture) -> dict[int, Any]:
    """steward id -> their current post for the match (the latest one assigned)."""
    from .models import StewardPost

    latest: dict[int, Any] = {}
    posts = StewardPost.objects.filter(fixture=fixture).select_related(
        "steward", "zone", "gate", "concourse"
    )
    for post in posts.order_by("assigned_at", "pk"):
        latest[post.steward_id] = post
    return latest


def broadcast_recipients(fixture: Fixture, zone: Any) -> set[int]:
    """Stewards posted at this match (in the zone, when one is given): who must acknowledge."""
    latest = current_posts(fixture)
    if zone is None:
        return set(latest)
    return {user_id for user_id, post in latest.items() if zone.pk in post_zone_ids(fixture, post)}


def broadcast_json(broadcast: Any) -> dict[str, Any]:
    acked = {ack.user_id for ack in broadcast.acks.all()}
    names = dict(
        get_user_model()
        .objects.filter(pk__in=broadcast.recipient_ids)
        .values_list("pk", "username")
    )
    return {
        "id": broadcast.pk,
        "script": broadcast.script,
        "text": broadcast.text,
        "zone": broadcast.zone.name if broadcast.zone else "",
        "sent_by": str(broadcast.sent_by),
        "sent_at": clock.iso(broadcast.sent_at),
        "recipients": [names[i] for i in broadcast.recipient_ids if i in names],
        "acknowledged": sorted(names[i] for i in acked if i in names),
    }


def broadcasts(fixture: Fixture) -> list[dict[str, Any]]:
    from .models import Broadcast

    found = Broadcast.objects.filter(fixture=fixture).select_related("zone", "sent_by")
    return [broadcast_json(b) for b in found.prefetch_related("acks")]


def steward_posts(fixture: Fixture) -> list[dict[str, str]]:
    """Each steward's current post for the match."""
    return sorted(
        (
            {"steward": p.steward.username, "name": str(p.steward), "post": post_label(p)}
            for p in current_posts(fixture).values()
        ),
        key=lambda row: row["name"],
    )


def fixture_for_checkpoints(user: Any, fixture_id: int) -> Fixture:
    """A match whose signed log checkpoints the user may see and download."""
    fixture = fixture_for(user, fixture_id)
    require(can_read_checkpoints(user, fixture))
    return fixture


def checkpoint_rows(fixture: Fixture) -> list[LogCheckpoint]:
    return list(LogCheckpoint.objects.filter(fixture=fixture).order_by("entries"))
