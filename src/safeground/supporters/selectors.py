"""Reads of supporters' reports: the match on now at a ground, the queue, a report's status as
its reporter sees it, the steward nearest a block, and what an organisation holds about a phone."""

import math
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import Prefetch, Q, QuerySet
from django.utils.translation import gettext_lazy as _

from safeground import clock
from safeground.accounts.models import User
from safeground.bans.models import AccessRecord
from safeground.bans.services import access_record_write
from safeground.incidents.flashpoint import zone_neighbours
from safeground.incidents.models import DEALT_WITH_STATUSES, LogEntry, StewardPost
from safeground.incidents.selectors import current_posts, incident_state, post_zone_ids, zone_map
from safeground.matches import selectors as matches_selectors
from safeground.matches.models import Fixture

from .categories import severity
from .models import Reporter, SupporterReport, TriageItem

QUEUE_PAGE = 50  # lines shown at once; the rest are paged, never dropped
# A group's size raises it within its severity: each doubling of its reports counts as this much
# newer, never newer than its last report (so never above a newer single report of its severity).
GROUP_STEP = timedelta(minutes=1)
# The match on now at a ground: the matches app's (re-exported for supporters' views and texts).
match_on_now = matches_selectors.match_on_now


def item_json(item: TriageItem) -> dict[str, Any]:
    return {
        "id": item.pk,
        "block": item.block.code if item.block else "",
        "category": item.category,
        "category_name": str(item.category_label),
        "count": item.count,
        "status": item.status,
        "trust": item.trust,
        "first_at": clock.iso(item.first_at),
        "last_at": clock.iso(item.last_at),
        "seq": item.log_entry.seq if item.log_entry_id and item.log_entry else None,
    }


def queue_rank(*, category: str, count: int, first_at: datetime, last_at: datetime) -> Any:
    """Where an item stands in the queue (smallest first): by severity (a life at risk first),
    then newest first, an item's age taken from its first report, raised by GROUP_STEP for each
    doubling of its reports but never past its last report. A new single report is at the top
    of its severity at once, and a flood of one complaint never sorts above a more severe report.
    """
    raised = first_at + GROUP_STEP * math.log2(max(count, 1))
    return severity(category), -min(raised, last_at).timestamp(), -first_at.timestamp()


@dataclass(frozen=True)
class Queue:
    """One page of the items waiting, and what is waiting in all."""

    items: list[TriageItem]  # this page's, in the queue's order
    waiting: int  # every item waiting, on every page
    by_severity: dict[int, int]  # items waiting of each severity (LIFE, HARM, CONDUCT)
    page: int
    pages: int
    blocks: list[str]  # the blocks with an item waiting (the map outlines them)

    @property
    def first(self) -> int:
        """The number of this page's first line (1-based), 0 when nothing waits."""
        return (self.page - 1) * QUEUE_PAGE + 1 if self.items else 0

    @property
    def last(self) -> int:
        return self.first + len(self.items) - 1 if self.items else 0


def queue(fixture: Fixture, page: int = 1) -> Queue:
    """The items waiting, in the queue's order (queue_rank), a page at a time: every waiting
    item is read in one query of five columns to be ordered and counted (a match's queue holds
    hundreds of items at most: a flood is a few), then the page's items with their first
    reports. A page past the last is the last."""
    waiting = list(
        TriageItem.objects.filter(fixture=fixture, status=TriageItem.Status.QUEUED).values_list(
            "pk", "category", "count", "first_at", "last_at", "block__code"
        )
    )
    waiting.sort(
        key=lambda row: queue_rank(category=row[1], count=row[2], first_at=row[3], last_at=row[4])
    )
    pages = max(1, math.ceil(len(waiting) / QUEUE_PAGE))
    page = min(max(page, 1), pages)
    shown = [row[0] for row in waiting[(page - 1) * QUEUE_PAGE : page * QUEUE_PAGE]]
    items = (
        TriageItem.objects.filter(pk__in=shown)
        .select_related("block")
        .prefetch_related(
            # The first few reports' words and photos; a flood's item has hundreds.
            Prefetch(
                "reports",
                queryset=SupporterReport.objects.order_by("received_at")[:3],
                to_attr="first_reports",
            )
        )
        if shown
        else []
    )
    by_pk = {item.pk: item for item in items}
    return Queue(
        items=[by_pk[pk] for pk in shown],
        waiting=len(waiting),
        by_severity=Counter(severity(row[1]) for row in waiting),
        page=page,
        pages=pages,
        blocks=sorted({row[5] for row in waiting if row[5]}),
    )


def queue_version(fixture: Fixture) -> tuple[Any, ...]:
    """What changes whenever the queue's fragment would: its items (a report joining one, an
    item begun, decided or tasked) and the stewards posted (the suggestions). One statement of
    plain SQL, its values opaque (compared, never shown): every control-room screen reads it at
    every refresh, and the ORM's compiling of two aggregates cost more than running them."""
    items, posts = TriageItem._meta.db_table, StewardPost._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT COUNT(*), SUM(count), MAX(last_at), MAX(decided_at), MAX(tasked_at),"
            f" (SELECT MAX(id) FROM {posts} WHERE fixture_id = %s)"
            f" FROM {items} WHERE fixture_id = %s",
            [fixture.pk, fixture.pk],
        )
        row = cursor.fetchone()
    return tuple(row) if row else ()


def decided_recently(fixture: Fixture, limit: int = 10) -> QuerySet[TriageItem]:
    return (
        TriageItem.objects.filter(fixture=fixture)
        .exclude(status=TriageItem.Status.QUEUED)
        .select_related("block", "log_entry", "decided_by")
        .order_by("-decided_at")[:limit]
    )


def item_reports(item: TriageItem) -> QuerySet[SupporterReport]:
    return item.reports.order_by("received_at")


def nearest_steward(
    fixture: Fixture, block_id: int | None, posts: dict[int, Any] | None = None
) -> User | None:
    """The posted steward nearest a block: posted to a zone holding it, else to a zone next to
    one, else anyone posted (by name, so the suggestion is stable). `posts`: the match's current
    posts when the caller has read them already (the queue asks for every item)."""
    posts = current_posts(fixture) if posts is None else posts
    if not posts:
        return None
    zones = zone_map(fixture)
    here = set(zones.blocks.get(block_id, ())) if block_id else set()
    near = {n for z in here for n in zone_neighbours(fixture).get(z, ())}

    def distance(post: Any) -> tuple[int, str]:
        covered = post_zone_ids(fixture, post)
        rank = 0 if covered & here else 1 if covered & near else 2
        return rank, str(post.steward)

    user: User = min(posts.values(), key=distance).steward
    return user


# What the reporter reads on their status page: the three steps of the loop.
RECEIVED, BEING_DEALT_WITH, DEALT_WITH = "received", "being_dealt_with", "dealt_with"
STATUS_LABELS = {
    RECEIVED: _("Received: the control room has your report"),
    BEING_DEALT_WITH: _("Being dealt with"),
    DEALT_WITH: _("Dealt with"),
}


def report_status(report: SupporterReport) -> str:
    """received until the control room decides; being dealt with once it is in the log; dealt
    with when its incident is resolved or closed, or the control room has decided no more is
    needed (dismissed)."""
    item = report.item
    if item.status == TriageItem.Status.DISMISSED:
        return DEALT_WITH
    if item.log_entry is None:
        return RECEIVED
    state = incident_state(item.log_entry)
    if state.status in DEALT_WITH_STATUSES:
        return DEALT_WITH
    return BEING_DEALT_WITH


def report_by_reference(reference: str) -> SupporterReport | None:
    return (
        SupporterReport.objects.filter(reference=reference.strip().upper())
        .select_related("item__log_entry", "block", "fixture__home_club", "fixture__away_club")
        .first()
    )


def report_organisation_id(report: SupporterReport) -> int:
    """Whose data a report is: the home club's organisation, or the ground's owner when the
    home club does not use Safeground."""
    fixture = report.fixture
    return fixture.home_club.organisation_id or fixture.ground.organisation_id


def report_contact_read(*, user: User, report: SupporterReport) -> str:
    """A reporter's way to be contacted, for the control room: the read is recorded."""
    _triage_read_record(user, report, AccessRecord.Action.READ_CONTACT)
    return report.contact


def report_photo_open(*, user: User, report: SupporterReport) -> Any:
    """A supporter's photo, opened for the control room: the read is recorded (it may show the
    reporter or those around them)."""
    _triage_read_record(user, report, AccessRecord.Action.READ_PHOTO)
    return report.photo.open("rb")


def _triage_read_record(user: User, report: SupporterReport, action: str) -> None:
    access_record_write(
        user=user,
        action=action,
        organisation=report_organisation_id(report),
        subject=f"report {report.reference}",
        reason=f"triage of item {report.item_id}",
    )


def phone_held(*, phone: str, organisation_id: int) -> dict[str, Any]:
    """What the organisation holds about a phone number (the text line's reporter): its reports
    at the organisation's matches (its home club's, or at its grounds), the texts its grounds'
    lines sent the phone, and a message waiting at one of them for its place. Another club's
    reports and texts of the same phone are not this organisation's to export. The caller
    (privacy) checks the user may export for the organisation and records the export."""
    from .abuse import keyed

    empty: dict[str, Any] = {"phone": phone, "reports": [], "texts": [], "awaiting": None}
    reporter = Reporter.objects.filter(key=keyed(phone.strip(), Reporter.Channel.SMS)).first()
    if reporter is None:
        return empty
    ours = Q(fixture__home_club__organisation_id=organisation_id) | Q(
        fixture__ground__organisation_id=organisation_id
    )
    reports = list(
        reporter.reports.filter(ours)
        .select_related("fixture__home_club", "fixture__away_club", "block")
        .order_by("received_at")
    )
    texts = list(
        reporter.texts.filter(ground__organisation_id=organisation_id).order_by("sent_at", "pk")
    )
    since = reporter.awaiting_since
    awaiting = since is not None and (
        reporter.awaiting_ground is not None
        and reporter.awaiting_ground.organisation_id == organisation_id
    )
    if not reports and not texts and not awaiting:
        return empty  # not even that the phone is known elsewhere
    return {
        "phone": reporter.phone,
        "erased_at": clock.iso(reporter.erased_at) if reporter.erased_at else None,
        "trust": reporter.trust,
        "texts_stopped_at": (
            clock.iso(reporter.texts_stopped_at) if reporter.texts_stopped_at else None
        ),
        # A text that named no place, waiting for the next to give it (sms.py).
        "awaiting": (
            {
                "since": clock.iso(since),
                "category": reporter.awaiting_category,
                "text": reporter.awaiting_text,
            }
            if awaiting and since is not None
            else None
        ),
        "reports": [
            {
                "reference": r.reference,
                "match": str(r.fixture),
                "received_at": clock.iso(r.received_at),
                "place": f"{r.block.code if r.block else ''} {r.row} {r.seat}".strip(),
                "category": r.category,
                "text": r.text,
                "contact": r.contact,
                "photo_sha256": r.photo_sha256,
            }
            for r in reports
        ],
        "texts": [{"sent_at": clock.iso(t.sent_at), "body": t.body} for t in texts],
    }


def supporters_summary(fixture: Fixture) -> dict[str, Any]:
    """The post-match report's part: supporters' reports by category, how they were decided, and
    the median minutes from an item's first report to its tasked steward's first answer on their
    phone (the log's task entry: the nearest the log comes to the steward's arrival). One query,
    and one more when a steward was tasked."""
    from statistics import median

    from django.db.models import Min

    from .categories import CATEGORIES

    items = list(
        TriageItem.objects.filter(fixture=fixture).values_list(
            "category", "status", "count", "first_at", "log_entry_id", "tasked_at"
        )
    )
    tasked = [entry for *_, entry, at in items if at is not None]
    answered = dict(
        LogEntry.objects.filter(fixture=fixture, kind=LogEntry.Kind.TASK, concerns__in=tasked)
        .values("concerns")
        .annotate(first=Min("logged_at"))
        .values_list("concerns", "first")
        if tasked
        else []
    )
    rows: dict[str, dict[str, Any]] = {}
    waits: dict[str, list[float]] = {}
    for category, status, count, first_at, entry, _tasked in items:
        row = rows.setdefault(category, {"reports": 0, "items": 0, "accepted": 0, "dismissed": 0})
        row["reports"] += count
        row["items"] += 1
        row["accepted"] += status in (TriageItem.Status.ACCEPTED, TriageItem.Status.MERGED)
        row["dismissed"] += status == TriageItem.Status.DISMISSED
        if entry in answered:
            waits.setdefault(category, []).append((answered[entry] - first_at).total_seconds() / 60)
    return {
        "total": sum(row["reports"] for row in rows.values()),
        "by_category": [
            {
                "code": c.code,
                "name": str(c.label),
                **rows[c.code],
                "to_steward_minutes": round(median(waits[c.code]), 1) if c.code in waits else None,
            }
            for c in CATEGORIES
            if c.code in rows
        ],
    }
