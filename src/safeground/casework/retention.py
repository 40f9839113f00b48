"""Casework's part of retention (ADR 0011), run by safeground.privacy in the daily job: the legal
holds (what an open case names, which every step leaves) and the evidence locker's step."""

from datetime import date

from django.conf import settings
from django.db.models import Max, Q
from django.utils import timezone

from safeground.bans.models import ENDED
from safeground.incidents.models import Photo
from safeground.retention import Erased, Holds, cutoff, file_erase

from .models import Case, CustodyRecord, Evidence, Outcome, Subject
from .services import custody_record_write


def legal_holds() -> Holds:
    """What every open case names: its people and ticket holders, and the stewards' photos of its
    log entries. Retention leaves them until the case is closed."""
    open_cases = Case.objects.filter(status=Case.Status.OPEN)
    subjects = Subject.objects.filter(case__in=open_cases)
    people = subjects.filter(person__isnull=False).values_list("person_id", flat=True)
    tickets = subjects.filter(ticket__isnull=False).values_list("ticket_id", flat=True)
    photos = Photo.objects.filter(entry__cases__in=open_cases).values_list("pk", flat=True)
    return Holds(
        people=frozenset(p for p in people if p is not None),
        tickets=frozenset(t for t in tickets if t is not None),
        log_photos=frozenset(photos),
    )


def evidence_retention_apply(today: date, holds: Holds) -> Erased:
    """Delete the evidence files no longer needed.

    A closed case's files go SAFEGROUND_EVIDENCE_RETENTION_DAYS after it closed (six years: the
    limitation period for a civil claim), unless a ban proposed from the case has not ended (the
    file is what the ban stands on). A file on a log entry only goes with the log's photos,
    SAFEGROUND_PHOTO_RETENTION_DAYS after the match, unless a case on that entry still keeps its
    own files (open, closed within the period, or a ban from it not ended). An open case holds
    its files. Each erased file keeps its row, SHA-256 and custody, gains `erased_at`
    and a custody record of its destruction. Held counts every file kept only by a hold: an open
    case's (its period has not begun) and those past their period."""
    days = settings.SAFEGROUND_EVIDENCE_RETENTION_DAYS
    entry_days = settings.SAFEGROUND_PHOTO_RETENTION_DAYS
    case_cutoff = cutoff(today, days)
    match_cutoff = cutoff(today, entry_days)
    files = Evidence.objects.exclude(file="").filter(erased_at__isnull=True)
    # The day a case closed is its "closed" event (a case is never reopened).
    closed = Case.objects.filter(status=Case.Status.CLOSED).annotate(
        closed_at=Max("events__at", filter=Q(events__action="closed"))
    )
    past = closed.filter(closed_at__lt=case_cutoff).values("pk")
    candidates = files.filter(
        Q(case__status=Case.Status.OPEN)
        | Q(case__in=past)
        | Q(case__isnull=True, fixture__kickoff__lt=match_cutoff)
    ).select_related("case")
    banned_cases = set(
        Outcome.objects.filter(ban__isnull=False)
        .exclude(ban__status__in=ENDED)
        .values_list("case_id", flat=True)
    )
    # A log entry's files stand with every case the entry is in: kept while any of them keeps
    # its own (open, closed within the period, or a ban from it not ended).
    keeping = Case.entries.through.objects.exclude(case__in=past) | (
        Case.entries.through.objects.filter(case__in=banned_cases)
    )
    held_entries = set(keeping.values_list("logentry_id", flat=True))
    held = erased = 0
    now = timezone.now()
    for evidence in candidates.order_by("pk"):
        case = evidence.case
        if (
            (case is not None and case.status == Case.Status.OPEN)
            or evidence.entry_id in held_entries
            or (case is not None and case.pk in banned_cases)
        ):
            held += 1
            continue
        file_erase(evidence, "file", "erased_at", now)
        rule = (
            f"case #{case.pk} closed more than {days} days ago"
            if case is not None
            else f"match more than {entry_days} days ago, no case"
        )
        custody_record_write(user=None, action=CustodyRecord.Action.DESTROY, evidence=evidence,
                             case=case, detail=f"file destroyed by retention: {rule}")  # fmt: skip
        erased += 1
    return Erased(
        what="evidence files",
        days=days,
        erased=erased,
        held=held,
        after=f"after the case closed; a log entry's only, {entry_days} after the match",
        held_by="by an open case or a ban not ended",
    )
