"""Every write of supporters' reports and their triage, one transaction each.

A report joins its match's queue, never the chained log: it is grouped into the open item of its
block and category (the reports of a few minutes counted as one line), and the control room
decides the item. Accepting it appends one entry to the log through the log's own service
(`log_entry_append`, chained like any other); merging links it to an incident already logged;
dismissing it keeps the reason. Every decision moves the reporters' trust.
"""

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cached_property
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone, translation
from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from safeground.accounts.models import User
from safeground.errors import SafegroundError, at_most
from safeground.incidents.chain_lock import one_sqlite_writer
from safeground.incidents.models import DEALT_WITH_STATUSES, LogEntry
from safeground.incidents.selectors import incident_state
from safeground.incidents.services import Place, log_entry_append, log_entry_assign
from safeground.live.catalogue import SUPPORTERS_ITEM
from safeground.live.events import Audience, publish
from safeground.matches.models import Fixture
from safeground.venues.models import Block, Ground

from . import queue_rows
from .abuse import Sent, TooManyReports, keyed
from .categories import BY_CODE, LIFE, severity
from .group_commit import GroupCommit
from .models import Reporter, SupporterReport, TriageItem
from .photos import photo_clean
from .selectors import item_json, nearest_steward
from .texts import text_send

MAX_TEXT = 1000
MAX_CONTACT = 200
ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
TRUST_ACCEPTED = 1
TRUST_DISMISSED = -2  # a false report costs more than a true one earns
ItemPlace = tuple[int, int | None, str]  # fixture, block, category: one open item each


class SupporterReportError(SafegroundError):
    code = "supporter_report_refused"


class SupporterReportNotFound(SupporterReportError):
    """What it names is not there (or not one you may see) (404)."""

    status = 404


class SupporterReportConflict(SupporterReportError):
    """Well formed, but refused by the state of things (409)."""

    status = 409


@dataclass(frozen=True)
class Sender:
    """Who sent a report: a device's cookie or a phone number, and the network address."""

    channel: str  # Reporter.Channel
    identity: str  # the cookie's token, or the phone number
    address: str = ""

    @cached_property
    def key(self) -> str:
        # Kept: a report's writing asks for it six times, each an HMAC.
        return keyed(self.identity, self.channel)


def _reference() -> str:
    # One read of the system's randomness, not one a character (2-3% of a flood's CPU); 256 is
    # a multiple of 32, so every character is as likely.
    return "SR" + "".join(ALPHABET[byte % 32] for byte in secrets.token_bytes(8))


@dataclass(eq=False)
class Incoming:
    """A report checked, waiting for its transaction (group_commit), where its bounds are held."""

    report: SupporterReport  # unsaved; its reporter and item are set when it is written
    sender: Sender


def report_receive(**report: Any) -> SupporterReport:
    """A supporter's report into the match's queue, grouped with the open item of its block and
    category; refused when over a bound (abuse.Sent) or not well formed. Written together with
    the reports arriving at the same moment (group_commit). Takes report_incoming's arguments."""
    return _reports_together.submit(report_incoming(**report))


def report_incoming(
    *,
    fixture: Fixture,
    sender: Sender,
    block: Block,
    category: str,
    row: str = "",
    seat: str = "",
    text: str = "",
    contact: str = "",
    photo: Any = None,
    sent_at: datetime | None = None,
) -> Incoming:
    """A supporter's report checked and made ready to be written (reports_write), or
    SupporterReportError naming what is not well formed."""
    if category not in BY_CODE:
        raise SupporterReportError("category", _("no category '%(code)s'") % {"code": category})
    if block.ground_id != fixture.ground_id:
        raise SupporterReportError(
            "block",
            _("block %(block)s is not at %(ground)s")
            % {"block": block.code, "ground": fixture.ground},
        )
    text, contact = text.strip(), contact.strip()
    if len(text) > MAX_TEXT:
        raise SupporterReportError("text", at_most(MAX_TEXT))
    if len(contact) > MAX_CONTACT:
        raise SupporterReportError("contact", at_most(MAX_CONTACT))
    row = row.strip().upper()[:10]
    if row and block.rows and row not in block.rows:
        # A text's row the plan does not know: kept in the words, not as the place.
        text, row = f"{text} (row {row}?)".strip(), ""
    clean = photo_clean(photo) if photo else None
    network = keyed(sender.address, "network") if sender.address else ""
    report = SupporterReport(
        reference=_reference(),
        fixture=fixture,
        channel=sender.channel,
        block=block,
        row=row,
        seat=seat.strip()[:10],
        category=category,
        text=text,
        contact=contact,
        network=network,
        received_at=timezone.now(),
        sent_at=sent_at,
    )
    if clean:
        report.photo, report.photo_sha256 = clean.file, clean.sha256
        report.photo_type = clean.content_type
    return Incoming(report, sender)


def reports_write(batch: list[Incoming]) -> list[SupporterReport | Exception]:
    """Reports into the queue in one transaction, each first held to its bounds (abuse.Sent),
    in four statements however many reports (queue_rows): their reporters and what they and
    their addresses sent lately, the new reporters, the items they join or begin, their rows.
    The queue hears of the items worth telling. A report over its bound is answered
    TooManyReports."""
    now = max(i.report.received_at for i in batch)
    with one_sqlite_writer(), transaction.atomic():
        reporters, counts = queue_rows.reporters_and_sent(
            keys=[i.sender.key for i in batch],
            networks=[i.report.network for i in batch],
            urgent_networks=[i.report.network for i in batch if _urgent(i.report)],
            now=now,
        )
        sent = Sent(reporters=reporters, counts=counts, now=now)
        results: list[SupporterReport | Exception] = []
        for incoming in batch:
            try:
                sent.admit(
                    key=incoming.sender.key,
                    network=incoming.report.network,
                    urgent=_urgent(incoming.report),
                )
            except TooManyReports as refused:
                results.append(refused)
            else:
                results.append(incoming.report)
        admitted = [i for i, r in zip(batch, results, strict=True) if r is i.report]
        if admitted:
            reporters |= _reporters_new(admitted, reporters)
            for incoming in admitted:
                incoming.report.pk = None  # a batch rolled back and written again
                incoming.report.reporter = reporters[incoming.sender.key]
            reports = [i.report for i in admitted]
            for item in _items_join(reports, now=now):
                item_publish(item)
            for report, (pk,) in zip(reports, queue_rows.rows_insert(reports), strict=True):
                report.pk = report.id = pk
                report._state.adding, report._state.db = False, connection.alias
    return results


_reports_together = GroupCommit(reports_write)


def _urgent(report: SupporterReport) -> bool:
    """A life at risk: held to its own, higher bounds (abuse.LIMITS)."""
    return severity(report.category) == LIFE


def _reporters_new(batch: list[Incoming], known: dict[str, Reporter]) -> dict[str, Reporter]:
    """The reporters met for the first time, made in one statement (a device's other report made
    one a moment ago in another process: met by the unique key, and kept)."""
    new = {
        i.sender.key: Reporter(
            key=i.sender.key,
            channel=i.sender.channel,
            phone=i.sender.identity if i.sender.channel == Reporter.Channel.SMS else "",
        )
        for i in batch
        if i.sender.key not in known
    }
    return queue_rows.reporters_insert(list(new.values())) if new else {}


def _items_join(reports: list[SupporterReport], *, now: datetime) -> list[TriageItem]:
    """Sets each report's item: the open item of its block and category, counted up by the
    reports joining it, or a new one, in one statement (queue_rows.items_join). Returns the
    items the queue should hear of. An item gone quiet for SAFEGROUND_SUPPORTERS_GROUP_MINUTES
    is closed for joining and a new one begun."""
    places: dict[ItemPlace, list[SupporterReport]] = {}
    for report in reports:
        places.setdefault((report.fixture_id, report.block_id, report.category), []).append(report)
    open_since = now - timedelta(minutes=settings.SAFEGROUND_SUPPORTERS_GROUP_MINUTES)
    items = queue_rows.items_join([_item_begun(j) for j in places.values()], open_since=open_since)
    quiet = places.keys() - items.keys()
    if quiet:  # their open items gone quiet: closed, and new ones begun (two statements more)
        queue_rows.items_close_quiet(quiet, open_since=open_since)
        items |= queue_rows.items_join(
            [_item_begun(places[p]) for p in quiet], open_since=open_since
        )
    told = []
    for place, joining in places.items():
        item = items[place]
        item.block = joining[0].block
        for report in joining:
            report.item = item
        before = item.count - len(joining)
        if any(_worth_telling(n) for n in range(before + 1, item.count + 1)):
            told.append(item)
    return told


def _item_begun(joining: list[SupporterReport]) -> TriageItem:
    """The item the reports of one place begin, or count up an open one by (queue_rows)."""
    first = joining[0]
    return TriageItem(
        fixture_id=first.fixture_id,
        block_id=first.block_id,
        category=first.category,
        count=len(joining),
        trust=max(r.reporter.trust for r in joining),
        first_at=min(r.received_at for r in joining),
        last_at=max(r.received_at for r in joining),
    )


def _worth_telling(count: int) -> bool:
    """The queue hears of an item when it is new, at its first few reports, then as its count
    doubles or passes a hundred: a flood of 500 reports is a handful of frames, not 500."""
    return count <= 3 or count & (count - 1) == 0 or count % 100 == 0


def text_awaiting_keep(*, reporter: Reporter, ground: Ground, category: str, text: str) -> None:
    """The text line's message that named no place, kept for the next text to give it."""
    Reporter.objects.filter(pk=reporter.pk).update(
        awaiting_text=text[:MAX_TEXT],
        awaiting_category=category,
        awaiting_since=timezone.now(),
        awaiting_ground=ground,
    )


def text_awaiting_take(
    *, reporter: Reporter, ground: Ground, since: datetime
) -> tuple[str, str] | None:
    """The category and words of the reporter's message awaiting its place at this ground, if
    sent after `since`; taken (a place completes one message, once). A message sent to another
    ground's line is that club's: it is not joined to a report here."""
    if reporter.awaiting_since is None or reporter.awaiting_ground_id != ground.pk:
        return None
    Reporter.objects.filter(pk=reporter.pk).update(
        awaiting_text="", awaiting_category="", awaiting_since=None, awaiting_ground=None
    )
    if reporter.awaiting_since < since:
        return None
    return reporter.awaiting_category, reporter.awaiting_text


def reporter_language_keep(*, sender: Sender, language: str) -> None:
    """The language the text line read from the phone: its later texts are written in it."""
    Reporter.objects.filter(key=sender.key).exclude(language=language).update(language=language)


def reporter_texts_choose(*, sender: Sender, texts: bool) -> Reporter:
    """The phone's choice on the text line: STOP (no more texts, not even a decision's) or START
    (texts again). A phone not met before is remembered with its choice."""
    reporter, _made = Reporter.objects.get_or_create(
        key=sender.key, defaults={"channel": Reporter.Channel.SMS, "phone": sender.identity}
    )
    reporter.texts_stopped_at = None if texts else timezone.now()
    Reporter.objects.filter(pk=reporter.pk).update(texts_stopped_at=reporter.texts_stopped_at)
    return reporter


def item_publish(item: TriageItem) -> None:
    """The item as the queue shows it, to the home club's staff (stewards see their tasks)."""
    publish(
        fixture_id=item.fixture_id,
        type=SUPPORTERS_ITEM,
        data=item_json(item),
        audience=Audience(home_only=True),
    )


def _decide(item_id: int, fixture: Fixture) -> TriageItem:
    item = (
        TriageItem.objects.select_for_update(of=("self",)).select_related("block").get(pk=item_id)
    )
    if item.fixture_id != fixture.pk:
        raise SupporterReportNotFound("item", _("not an item of this match"))
    if item.status != TriageItem.Status.QUEUED:
        raise SupporterReportConflict(
            "item",
            _("already %(status)s") % {"status": item.get_status_display().lower()},
        )
    return item


def _trust_move(item: TriageItem, change: int) -> None:
    Reporter.objects.filter(reports__item=item).update(trust=F("trust") + change)


def item_accept(
    *, fixture: Fixture, item_id: int, by: User, severity: int | None = None
) -> TriageItem:
    """Into the log: one report entry made from the item, chained like any other, its text the
    supporters' words (escaped wherever shown) and the item's reference."""
    with one_sqlite_writer(), transaction.atomic():
        item = _decide(item_id, fixture)
        assert item.block is not None
        rows = {r.row for r in item.reports.all() if r.row}
        first = item.reports.order_by("received_at").first()
        words = first.text if first and first.text else "(no description)"
        entry = log_entry_append(
            fixture=fixture,
            author=by,
            category=BY_CODE[item.category].log_category,
            text=f"Supporter reports ×{item.count} ({item.get_category_display()}): {words}",
            place=Place(block=item.block.code, first_row=rows.pop() if len(rows) == 1 else ""),
            severity=severity,
            idempotency_key=f"supporters-item-{item.pk}",
        )
        _decided(item, TriageItem.Status.ACCEPTED, by, log_entry=entry)
        _trust_move(item, TRUST_ACCEPTED)
    return item


def item_merge(*, fixture: Fixture, item_id: int, by: User, seq: int) -> TriageItem:
    """Into an incident already in the log: the item follows that incident's state."""
    with one_sqlite_writer(), transaction.atomic():
        item = _decide(item_id, fixture)
        entry = LogEntry.objects.filter(
            fixture=fixture, seq=seq, kind__in=[LogEntry.Kind.REPORT, LogEntry.Kind.WARNING]
        ).first()
        if entry is None:
            raise SupporterReportNotFound(
                "seq", _("no incident #%(seq)s in this match's log") % {"seq": seq}
            )
        # An incident already resolved or closed: its reporters hear it has been dealt with, now
        # (its resolution, before they reported, told only the reporters it had then), and the
        # item takes no more reports (a later one is news: a new item, _items_join).
        dealt_with = incident_state(entry).status in DEALT_WITH_STATUSES
        told = {"dealt_with_told_at": timezone.now(), "is_open": False} if dealt_with else {}
        _decided(item, TriageItem.Status.MERGED, by, log_entry=entry, **told)
        _trust_move(item, TRUST_ACCEPTED)
    return item


def item_dismiss(*, fixture: Fixture, item_id: int, by: User, reason: str) -> TriageItem:
    """Not for the log, with the reason; later reports of the block begin a new item."""
    reason = reason.strip()
    if not reason:
        raise SupporterReportError("reason", _("say why the reports are dismissed"))
    if len(reason) > 500:
        raise SupporterReportError("reason", at_most(500))
    with one_sqlite_writer(), transaction.atomic():
        item = _decide(item_id, fixture)
        _decided(item, TriageItem.Status.DISMISSED, by, reason=reason, is_open=False)
        _trust_move(item, TRUST_DISMISSED)
    return item


def _decided(item: TriageItem, status: str, by: User, **fields: Any) -> None:
    item.status = status
    item.decided_by = by
    item.decided_at = timezone.now()
    for name, value in fields.items():
        setattr(item, name, value)
    item.save()
    item_publish(item)
    # The text line's reporters hear by text, as the seat page's read it on their status page;
    # once the decision is committed (a text cannot be taken back if it rolls back).
    dealt_with = item.dealt_with_told_at is not None
    transaction.on_commit(lambda: _reporters_tell(item.pk, status, dealt_with), robust=True)


# What the text line's reporters are told, in the language the line read from their phone (Welsh
# or English; the site's before it read any): never that of the control room's user whose
# decision sends the text.
TOLD_DISMISSED = gettext_lazy(
    "Your report %(reference)s has been looked at by the control room: no further action."
)
TOLD_BEING_DEALT_WITH = gettext_lazy(
    "Your report %(reference)s is being dealt with by the control room."
)
TOLD_DEALT_WITH = gettext_lazy("Your report %(reference)s has been dealt with. Thank you.")


def _reporters_tell(item_id: int, status: str, dealt_with: bool) -> None:
    """One text to each of the item's reporters on the text line: what the control room made of
    their report."""
    if status == TriageItem.Status.DISMISSED:
        words = TOLD_DISMISSED
    else:
        words = TOLD_DEALT_WITH if dealt_with else TOLD_BEING_DEALT_WITH
    _reporters_text([item_id], words)


def reporters_tell_dealt_with(status_entry: LogEntry) -> None:
    """The log's incident resolved or closed (incidents.hooks, after its commit): the reporters
    on the text line of the items in it are told their report has been dealt with, once (an
    incident resolved again, or closed after it was resolved, tells nobody twice). The items
    take no more reports: one sent after the incident was dealt with is news, and begins a new
    item in the queue (its reporter reads "received", and a texter is told when it is decided),
    never folded into the closed one."""
    incident_id = status_entry.concerns_id or status_entry.pk
    with one_sqlite_writer(), transaction.atomic():
        untold = list(
            TriageItem.objects.select_for_update()
            .filter(log_entry_id=incident_id, dealt_with_told_at=None)
            .values_list("pk", flat=True)
        )
        TriageItem.objects.filter(pk__in=untold).update(
            dealt_with_told_at=timezone.now(), is_open=False
        )
    # Texted once marked as told: a text that fails is not sent again at the next resolution.
    _reporters_text(untold, TOLD_DEALT_WITH)


def _reporters_text(item_ids: list[int], words: Promise) -> None:
    """One text (`words` with the reference of their first report) to each reporter on the
    text line of these items (texts.text_send leaves out a phone that texted STOP, or one
    erased)."""
    if not item_ids:
        return
    told = set()
    reports = SupporterReport.objects.filter(item_id__in=item_ids, channel=Reporter.Channel.SMS)
    for report in reports.select_related("reporter", "fixture").order_by("received_at"):
        if report.reporter_id not in told:  # several reports of one item: one text
            told.add(report.reporter_id)
            with translation.override(report.reporter.language or settings.LANGUAGE_CODE):
                body = str(words) % {"reference": report.reference}
            text_send(reporter=report.reporter, ground=report.fixture.ground_id, body=body)


def item_task(*, fixture: Fixture, item_id: int, by: User, steward: User | None = None) -> User:
    """Task a steward (the nearest posted one unless named) with the item's incident: the log's
    own assignment, which reaches the steward's phone."""
    with one_sqlite_writer(), transaction.atomic():
        item = TriageItem.objects.select_for_update(of=("self",)).get(pk=item_id, fixture=fixture)
        if item.log_entry is None:
            raise SupporterReportConflict("item", _("accept the item into the log first"))
        steward = steward or nearest_steward(fixture, item.block_id)
        if steward is None:
            raise SupporterReportConflict("steward", _("no steward is posted yet"))
        log_entry_assign(
            entry=item.log_entry,
            author=by,
            assignee=steward,
            note=f"Supporter reports ×{item.count}: nearest posted steward",
        )
        item.tasked_at = timezone.now()
        item.save(update_fields=["tasked_at"])
        item_publish(item)
    return steward
