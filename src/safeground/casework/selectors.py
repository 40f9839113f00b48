"""Reads of casework. A read that needs a right fetches and checks in one function; a read of
personal data (who was there) or of a file (the locker) writes its record in the same function:
no page can show them without it.
"""

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.translation import gettext as _

from safeground import clock
from safeground.accounts.permissions import (
    can_identify,
    can_work_cases,
    is_home_staff,
    require,
)
from safeground.bans.models import AccessRecord
from safeground.bans.selectors import reason_check
from safeground.bans.services import access_record_write
from safeground.entry.selectors import subject_ticket_ids
from safeground.errors import erased_by_retention
from safeground.incidents.models import LogEntry, Photo
from safeground.incidents.selectors import (
    entries_seen_by,
    home_only_entries,
    logged_entry_audience,
)
from safeground.live.viewers import viewer_for
from safeground.matches.models import Fixture, FixtureShare
from safeground.matches.selectors import fixture_for

from .models import Case, CustodyRecord, Evidence, Outcome, Subject
from .services import (
    CaseworkError,
    CaseworkNotFound,
    FileErased,
    case_of_entry,
    custody_record_write,
    entry_home_office_group,
)
from .who import (
    MAX_ROWS,
    PAGE_SIZE,
    WhoCount,
    WhoWasThere,
    areas_for,
    count_in,
    holders_in,
)


def fixture_for_casework(user: Any, fixture_id: int) -> Fixture:
    fixture = fixture_for(user, fixture_id)
    require(can_work_cases(user, fixture))
    return fixture


def case_for(user: Any, case_id: int) -> Case:
    case = get_object_or_404(
        Case.objects.select_related("fixture__ground", "fixture__home_club",
                                    "fixture__away_club", "opened_by"),
        pk=case_id,
    )  # fmt: skip
    require(can_work_cases(user, case.fixture))
    # A case about a home-only entry stays with the home club's staff, as the entry does.
    if not is_home_staff(user, case.fixture):
        require(not case.entries.filter(home_only_entries()).exists())
    return case


def case_detail(case: Case) -> dict[str, Any]:
    """Everything the case page and the bundle show, read in a few queries: the case's evidence
    and the evidence and stewards' photos attached to its log entries."""
    entries = list(
        case.entries.select_related("category", "block", "zone", "gate", "concourse").order_by(
            "seq"
        )
    )
    evidence = Evidence.objects.filter(Q(case=case) | Q(entry__in=[e.pk for e in entries]))
    return {
        "entries": entries,
        "subjects": list(case.subjects.select_related("person", "ticket__block", "added_by")),
        "outcomes": list(
            case.outcomes.select_related("subject__ticket", "subject__person", "ban", "by")
        ),
        "evidence": list(
            evidence.select_related("uploaded_by", "entry", "subject__ticket__block").distinct()
        ),
        "photos": list(
            Photo.objects.filter(entry__in=[e.pk for e in entries])
            .select_related("entry", "uploaded_by")
            .order_by("uploaded_at", "pk")
        ),
        "events": list(case.events.all()),
    }


def case_evidence(case: Case) -> QuerySet[Evidence]:
    """The case's evidence and that of its log entries, as the case page shows it."""
    entries = case.entries.values("pk")
    return Evidence.objects.filter(Q(case=case) | Q(entry__in=entries)).distinct()


@transaction.atomic
def case_subjects_read(user: Any, case: Case) -> list[Subject]:
    """The case's subjects; each person or ticket holder named is a read of personal data, with
    its access record (the register's log), in the same transaction."""
    subjects = list(case.subjects.select_related("person", "ticket__block", "added_by"))
    for subject in subjects:
        if subject.kind in (Subject.Kind.PERSON, Subject.Kind.TICKET_HOLDER):
            access_record_write(
                user=user, action=AccessRecord.Action.READ, organisation=case.organisation_id,
                person=subject.person, reason=f"the subjects of case #{case.pk} (API)",
                detail=f"subject #{subject.pk}: {subject.get_kind_display()}",
            )  # fmt: skip
    return subjects


def cases_of(user: Any, fixture: Fixture) -> list[Case]:
    require(can_work_cases(user, fixture))
    cases = fixture.cases.select_related("opened_by")
    if not is_home_staff(user, fixture):
        cases = cases.exclude(entries__in=_home_only())
    return list(cases.distinct())


def _home_only() -> QuerySet[LogEntry]:
    """The entries the log keeps to the home club's staff (its one rule: home_only_entries)."""
    return LogEntry.objects.filter(home_only_entries())


def reports_of(user: Any, fixture: Fixture) -> list[LogEntry]:
    """The match's reports the user may see, newest first, for choosing what a case is about
    (a home-only entry stays with the home club's staff, as in the log)."""
    reports = entries_seen_by(
        user, fixture, LogEntry.objects.filter(fixture=fixture, kind=LogEntry.Kind.REPORT)
    )
    return list(
        reports.select_related("category", "block", "zone", "gate", "concourse").order_by("-seq")
    )


def report_of(user: Any, fixture: Fixture, entry_id: int) -> LogEntry:
    """One of the match's reports the user may see (404 otherwise), with its open case if any."""
    reports = entries_seen_by(
        user, fixture, LogEntry.objects.filter(fixture=fixture, kind=LogEntry.Kind.REPORT)
    )
    return get_object_or_404(
        reports.select_related("category", "block", "zone", "gate", "concourse"), pk=entry_id
    )


def arrest_defaults(entry: LogEntry) -> dict[str, str]:
    """What the arrest form offers first: the offence group the entry (or its case) points to,
    and the force the match is shared with for policing."""
    police = (
        entry.fixture.shares.filter(purpose=FixtureShare.Purpose.POLICE)
        .order_by("pk")
        .values_list("organisation__name", flat=True)
        .first()
    )
    return {"home_office_offence": entry_home_office_group(entry), "force": police or ""}


def arrests_already(entry: LogEntry) -> list[Outcome]:
    """The arrests already recorded in the entry's case (the case an arrest from it goes into):
    a second one from the same entry is most often the first recorded twice."""
    case = case_of_entry(entry)
    if case is None:
        return []
    return list(case.outcomes.filter(kind=Outcome.Kind.ARREST).select_related("by").order_by("pk"))


def _distance(rows: int) -> int:
    if rows < 0 or rows > MAX_ROWS:
        raise CaseworkError(
            "rows", _("between 0 and %(most)s rows either side") % {"most": MAX_ROWS}
        )
    return rows


def _placed_entries(user: Any, fixture: Fixture, entry_ids: list[int]) -> list[LogEntry]:
    """The entries a look-up starts from, checked: the user's right to identify, each entry in
    the match's log and seen by the user, each naming a block."""
    require(can_identify(user, fixture))
    if not entry_ids:
        raise CaseworkError("entries", _("choose at least one log entry"))
    entries = list(
        LogEntry.objects.filter(fixture=fixture, pk__in=entry_ids)
        .select_related("block")
        .order_by("seq")
    )
    if len(entries) != len(set(entry_ids)):
        raise CaseworkNotFound("entries", _("an entry is not in this match's log"))
    # The log's rule: a home-only entry (or an action on one) is the home club's staff's alone.
    if not is_home_staff(user, fixture):
        require(not _home_only().filter(pk__in=[e.pk for e in entries]).exists())
    unplaced = [e for e in entries if e.block is None]
    if unplaced:
        said = _("entry #%(seq)s names no block: nobody is seated there")
        raise CaseworkError("entries", said % {"seq": unplaced[0].seq})
    return entries


def who_count(
    *, user: Any, fixture: Fixture, entry_ids: list[int], rows: int, adjacent: bool
) -> WhoCount:
    """How many people a look-up would cover, before anyone is named: the same right and checks
    as the names, no reason and no access record (it names nobody)."""
    rows = _distance(rows)
    entries = _placed_entries(user, fixture, entry_ids)
    areas = areas_for(entries, rows=rows, adjacent=adjacent)
    people, entered = count_in(fixture.pk, areas)
    return WhoCount(rows=rows, adjacent=adjacent, areas=areas, people=people, entered=entered)


@transaction.atomic
def who_was_there(
    *,
    user: Any,
    fixture: Fixture,
    entry_ids: list[int],
    rows: int,
    adjacent: bool,
    reason: str,
    page: int = 1,
) -> WhoWasThere:
    """One page (PAGE_SIZE names) of the ticket holders seated near where the entries place an
    incident: only for roles with the right to identify (accounts.permissions.can_identify), and
    every page read is an access record of the register's kind, with the reason given; a look-up
    of more than SAFEGROUND_WHO_LARGE people is recorded as a large one."""
    reason = reason_check(reason)
    rows = _distance(rows)
    entries = _placed_entries(user, fixture, entry_ids)
    found = WhoWasThere(entries=entries, rows=rows, adjacent=adjacent)
    found.areas = areas_for(entries, rows=rows, adjacent=adjacent)
    holders = holders_in(fixture.pk, found.areas)
    found.people = len(holders)
    found.entered = sum(1 for h in holders if h.entered)
    found.pages = max(1, -(-found.people // PAGE_SIZE))
    if page < 1 or page > found.pages:
        raise CaseworkNotFound("page", _("between 1 and %(pages)s") % {"pages": found.pages})
    found.page = page
    found.holders = holders[found.first - 1 : found.first - 1 + PAGE_SIZE]
    shown = f"names {found.first}–{found.last}" if found.holders else "none"
    access_record_write(
        user=user,
        action=(
            AccessRecord.Action.IDENTIFY_LARGE if found.large else AccessRecord.Action.IDENTIFY
        ),
        organisation=fixture.ground.organisation_id,
        reason=reason,
        # The counts before the areas: the detail is cut at 300 characters, the areas' list last.
        detail=(
            f"fixture {fixture.pk}, entries {', '.join(f'#{e.seq}' for e in entries)}: "
            f"{found.people} holders, page {page} of {found.pages} ({shown}); "
            f"{'; '.join(a.label for a in found.areas)}"
        ),
    )
    return found


def ban_grounds_sources(ban_ids: list[int]) -> dict[int, list[tuple[str, str]]]:
    """bans.hooks: for bans proposed from a case, the case and each of its log entries (with the
    start of its hash), linked to the case's page. Two queries, whatever the number of bans."""
    outcomes = list(
        Outcome.objects.filter(ban_id__in=ban_ids, kind=Outcome.Kind.CLUB_BAN).select_related(
            "case"
        )
    )
    entries: dict[int, list[LogEntry]] = {}
    through = Case.entries.through.objects.filter(case_id__in={o.case_id for o in outcomes})
    for link in through.select_related("logentry").order_by("logentry__seq"):
        entries.setdefault(link.case_id, []).append(link.logentry)
    found: dict[int, list[tuple[str, str]]] = {}
    for outcome in outcomes:
        url = reverse("case", args=[outcome.case_id])
        assert outcome.ban_id is not None
        found.setdefault(outcome.ban_id, []).append(
            (f"Case #{outcome.case_id}: {outcome.case.title}", url)
        )
        for entry in entries.get(outcome.case_id, []):
            found[outcome.ban_id].append((f"log entry #{entry.seq} (hash {entry.hash[:12]}…)", url))
    return found


# --- subject access (safeground.privacy) -------------------------------------------------------


def _at(value: Any) -> str | None:
    return clock.iso_or_none(value)


def subject_access_cases(person: Any) -> dict[str, Any]:
    """The case subjects naming the person (as a register person, or as the holder of one of
    their tickets) and the outcomes recorded against them. The caller checks and records."""
    tickets = subject_ticket_ids(person)
    subjects = (
        Subject.objects.filter(Q(person=person) | Q(ticket_id__in=tickets))
        .select_related("case__fixture__home_club", "case__fixture__away_club")
        .prefetch_related("outcomes")
        .order_by("pk")
    )
    return {
        "case_subjects": [
            {
                "id": subject.pk,
                "case": subject.case_id,
                "case_title": subject.case.title,
                "case_status": subject.case.status,
                "match": str(subject.case.fixture),
                "kind": subject.kind,
                "ticket": subject.ticket_id,
                "description": subject.description,
                "added_at": _at(subject.added_at),
                "outcomes": [
                    {
                        "id": outcome.pk,
                        "kind": outcome.kind,
                        "offence": outcome.offence,
                        "home_office_offence": outcome.home_office_offence,
                        "force": outcome.force,
                        "reference": outcome.reference,
                        "ban": outcome.ban_id,
                        "note": outcome.note,
                        "at": _at(outcome.at),
                    }
                    for outcome in subject.outcomes.all()
                ],
            }
            for subject in subjects
        ]
    }


# --- the evidence locker ------------------------------------------------------------------------


def _home_only_evidence() -> Q:
    """Evidence of a home-only entry, or of a case about one: the home club's staff's alone."""
    return Q(entry__in=_home_only()) | Q(case__entries__in=_home_only())


@dataclass(frozen=True)
class Locker:
    evidence: list[Evidence]
    photos: list[Photo]


def locker(user: Any, fixture: Fixture) -> Locker:
    """Every piece of evidence of the match, and the stewards' photos of the entries this user
    may see (the log's one visibility rule)."""
    require(can_work_cases(user, fixture))
    found = Evidence.objects.filter(fixture=fixture)
    if not is_home_staff(user, fixture):
        found = found.exclude(_home_only_evidence())
    evidence = list(found.select_related("case", "entry", "uploaded_by").distinct())
    viewer = viewer_for(user, fixture)
    photos = [
        photo
        for photo in Photo.objects.filter(entry__fixture=fixture)
        .select_related("entry__fixture__ground", "entry__concerns", "uploaded_by")
        .order_by("uploaded_at", "pk")
        if logged_entry_audience(photo.entry).admits(viewer)
    ]
    return Locker(evidence=evidence, photos=photos)


@transaction.atomic
def evidence_open(*, user: Any, evidence_id: int, download: bool) -> Evidence:
    """A piece of evidence, checked, its viewing or download recorded in its chain of custody."""
    evidence = get_object_or_404(Evidence.objects.select_related("fixture__ground"), pk=evidence_id)
    require(can_work_cases(user, evidence.fixture))
    if not is_home_staff(user, evidence.fixture):
        require(not Evidence.objects.filter(_home_only_evidence(), pk=evidence.pk).exists())
    if evidence.erased_at is not None:  # nothing to view: no custody record
        raise FileErased(
            "evidence",
            erased_by_retention(
                _("evidence #%(id)s") % {"id": evidence.pk}, evidence.erased_at, evidence.sha256
            ),
        )
    if not evidence.file:
        raise Http404(_("a CCTV reference has no file"))
    action = CustodyRecord.Action.DOWNLOAD if download else CustodyRecord.Action.VIEW
    custody_record_write(user=user, action=action, evidence=evidence, case=evidence.case)
    return evidence


@transaction.atomic
def photo_open(*, user: Any, photo_id: int, download: bool) -> Photo:
    """A steward's photo from the locker: checked as the log checks it, and recorded."""
    photo = get_object_or_404(
        Photo.objects.select_related("entry__fixture__ground", "entry__concerns"), pk=photo_id
    )
    fixture = photo.entry.fixture
    require(can_work_cases(user, fixture))
    require(logged_entry_audience(photo.entry).admits(viewer_for(user, fixture)))
    if photo.erased_at is not None:
        raise FileErased(
            "photo",
            erased_by_retention(
                _("photo %(photo)s") % {"photo": photo.pk}, photo.erased_at, photo.sha256
            ),
        )
    action = CustodyRecord.Action.DOWNLOAD if download else CustodyRecord.Action.VIEW
    custody_record_write(user=user, action=action, photo=photo)
    return photo


def custody_of(evidence: Evidence) -> list[CustodyRecord]:
    return list(evidence.custody.all())
