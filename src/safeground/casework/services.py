"""Every write of casework: opening a case, its subjects, outcomes and ban proposals, evidence
and its chain of custody. One transaction each; each change of a case leaves a CaseEvent.

Pages and the API check who may act (accounts.permissions) before calling these; the services
check what may be written.
"""

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import IO, Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from safeground import clock
from safeground.accounts.models import User
from safeground.bans.models import AccessRecord, Ban, Person
from safeground.bans.services import SCHEDULED, access_record_write, ban_propose
from safeground.entry.models import Ticket
from safeground.errors import SafegroundError, one_of, too_long
from safeground.incidents.models import LogEntry, Photo
from safeground.matches.models import Fixture

from .arrest_file import ArrestRow, ArrestsConflict
from .models import Case, CaseEvent, CustodyRecord, Evidence, Outcome, Subject

MAX_TEXT = 4000


class CaseworkError(SafegroundError):
    """Input casework refuses; `field` names what is wrong."""

    code = "casework_refused"


class CaseworkNotFound(CaseworkError):
    """What it names is not there (or not one you may see) (404)."""

    status = 404


class CaseworkConflict(CaseworkError):
    """Well formed, but refused by the state of things (409)."""

    status = 409


class FileErased(SafegroundError):
    """A file retention has deleted (ADR 0011): its row and SHA-256 stay, the bytes are gone."""

    code = "file_erased"
    status = 410


def text_field(field: str, value: str, *, required: bool = True, max_length: int = MAX_TEXT) -> str:
    value = (value or "").strip()
    if required and not value:
        raise CaseworkError(field, _("is required"))
    if len(value) > max_length:
        raise CaseworkError(field, too_long(len(value), max_length))
    return value


def case_event(case: Case, *, by: User, action: str, detail: str) -> CaseEvent:
    return CaseEvent.objects.create(
        case=case, at=timezone.now(), by=by, by_name=str(by), action=action,
        detail=detail,
    )  # fmt: skip


def entry_label(entry: LogEntry) -> str:
    return f"#{entry.seq}"


# --- cases --------------------------------------------------------------------------------------


@transaction.atomic
def case_open(
    *, by: User, fixture: Fixture, entries: Sequence[LogEntry], title: str, summary: str = ""
) -> Case:
    """A case about one or more log entries of a match; it belongs to the home club."""
    if not entries:
        raise CaseworkError("entries", _("choose at least one log entry"))
    strangers = [e for e in entries if e.fixture_id != fixture.pk]
    if strangers:
        raise CaseworkError(
            "entries",
            _("entry %(entry)s is not in this match's log") % {"entry": strangers[0].pk},
        )
    title = text_field("title", title, max_length=200)
    case = Case.objects.create(
        organisation_id=fixture.ground.organisation_id,
        fixture=fixture,
        title=title,
        summary=text_field("summary", summary, required=False),
        opened_by=by,
        opened_at=timezone.now(),
    )
    ordered = sorted(entries, key=lambda e: e.seq)
    case.entries.set(ordered)
    case_event(case, by=by, action="opened",
           detail=f"{title}; log entries {', '.join(entry_label(e) for e in ordered)}")  # fmt: skip
    return case


@transaction.atomic
def case_close(*, case: Case, by: User, reason: str) -> Case:
    reason = text_field("reason", reason)
    case = Case.objects.select_for_update().get(pk=case.pk)
    if case.status == Case.Status.CLOSED:
        raise CaseworkError("status", _("case #%(case)s is already closed") % {"case": case.pk})
    case.status = Case.Status.CLOSED
    case.save(update_fields=["status"])
    case_event(case, by=by, action="closed", detail=reason)
    return case


@transaction.atomic
def subject_add(
    *,
    case: Case,
    by: User,
    kind: str,
    person: Person | None = None,
    ticket: Ticket | None = None,
    description: str = "",
) -> Subject:
    """Who or what the case is about (a person on the register, a ticket holder of the match, an
    unidentified person described, or material)."""
    if kind not in Subject.Kind.values:
        raise CaseworkError("kind", one_of(Subject.Kind.values))
    description = text_field("description", description, required=False)
    if kind == Subject.Kind.PERSON:
        if person is None or person.organisation_id != case.organisation_id:
            raise CaseworkError("person", _("a person on the club's register"))
        if person.erased_at:
            raise CaseworkError("person", _("this person was erased by retention"))
        ticket = None
    elif kind == Subject.Kind.TICKET_HOLDER:
        if ticket is None or ticket.fixture_id != case.fixture_id:
            raise CaseworkError("ticket", _("a ticket of this case's match"))
        person = None
    else:
        if not description:
            raise CaseworkError("description", _("describe the person or the material"))
        person = ticket = None
    subject = Subject.objects.create(
        case=case, kind=kind, person=person, ticket=ticket, description=description,
        added_by=by, added_at=timezone.now(),
    )  # fmt: skip
    if person is not None:
        # Reading the register to name its person in a case is a read like any other.
        access_record_write(
            user=by, action=AccessRecord.Action.READ, organisation=case.organisation_id,
            person=person, reason=f"named as a subject of case #{case.pk}",
        )  # fmt: skip
    case_event(case, by=by, action="subject added", detail=f"{subject.get_kind_display()}: "
           f"{subject.label}")  # fmt: skip
    return subject


def case_offences(case: Case) -> list[str]:
    """The offences an arrest in this case may name: those of its entries' categories."""
    found = case.entries.exclude(category__offence="").values_list("category__offence", flat=True)
    return sorted(set(found))


PEOPLE = {Subject.Kind.PERSON, Subject.Kind.TICKET_HOLDER, Subject.Kind.UNIDENTIFIED}

# The Home Office group an arrest for a log category most likely falls in (the officer may choose
# another: violent disorder and ticket touting have no category of their own).
_GROUP = Outcome.HomeOfficeOffence
HOME_OFFICE_GROUP_OF_CATEGORY = {
    "missile": _GROUP.MISSILE,
    "pitch-incursion": _GROUP.PITCH_INCURSION,
    "segregation-breach": _GROUP.PUBLIC_DISORDER,
    "disorder": _GROUP.PUBLIC_DISORDER,
    "pyrotechnic": _GROUP.PYROTECHNICS,
    "chanting-racist": _GROUP.CHANTING,
    "chanting-homophobic": _GROUP.CHANTING,
    "chanting-other": _GROUP.CHANTING,
    "offensive-material": _GROUP.PUBLIC_DISORDER,
    "alcohol": _GROUP.ALCOHOL,
    "damage": _GROUP.CRIMINAL_DAMAGE,
}


# The words a log entry uses for an offence -> its group, read when its category names none
# (an "arrest" entry: "Arrest 1: public order offence"). First match wins: the more particular
# words first ("violent disorder" before "disorder").
HOME_OFFICE_GROUP_OF_WORDS = (
    ("violent disorder", _GROUP.VIOLENT_DISORDER),
    ("public order", _GROUP.PUBLIC_DISORDER),
    ("disorder", _GROUP.PUBLIC_DISORDER),
    ("affray", _GROUP.PUBLIC_DISORDER),
    ("drunk", _GROUP.ALCOHOL),
    ("alcohol", _GROUP.ALCOHOL),
    ("pitch", _GROUP.PITCH_INCURSION),
    ("missile", _GROUP.MISSILE),
    ("thrown", _GROUP.MISSILE),
    ("tout", _GROUP.TICKET_TOUTING),
    ("chant", _GROUP.CHANTING),
    ("damage", _GROUP.CRIMINAL_DAMAGE),
    ("pyrotechnic", _GROUP.PYROTECHNICS),
    ("flare", _GROUP.PYROTECHNICS),
    ("smoke bomb", _GROUP.PYROTECHNICS),
)


def _group_of(code: str, text: str) -> str | None:
    if code in HOME_OFFICE_GROUP_OF_CATEGORY:
        return HOME_OFFICE_GROUP_OF_CATEGORY[code]
    words = text.lower()
    return next((group for said, group in HOME_OFFICE_GROUP_OF_WORDS if said in words), None)


def case_home_office_group(case: Case) -> str:
    """The group the case's most severe entry points to, by its category or its words ("other"
    if none does)."""
    entries = case.entries.order_by("-severity", "seq").values_list("category__code", "text")
    for code, text in entries:
        if group := _group_of(code or "", text):
            return group
    return _GROUP.OTHER


def entry_home_office_group(entry: LogEntry) -> str:
    """The group to offer first for an arrest from this entry: its open case's, else its own
    category's or words' ("other" if neither points to one)."""
    case = case_of_entry(entry)
    if case is not None:
        return case_home_office_group(case)
    return _group_of(entry.category.code if entry.category else "", entry.text) or _GROUP.OTHER


def _arrest_fields(
    *,
    case: Case,
    offence: str,
    home_office_offence: str,
    club: str,
    force: str,
    reference: str,
) -> dict[str, str]:
    """An arrest's particulars, checked: the Home Office group from its list (the case's entries
    suggest one), the arrested person's club, the police reference; the offence, if named, one
    of the entries' categories' offences; the force if known."""
    if offence:
        offences = case_offences(case)
        if offence not in offences:
            allowed = "; ".join(offences) or _("none: leave it empty, the group is enough")
            # The request may be well formed: the case's entries refuse it.
            raise CaseworkConflict(
                "offence",
                _("one of the entries' offences (%(offences)s)") % {"offences": allowed},
            )
    home_office_offence = home_office_offence or case_home_office_group(case)
    if home_office_offence not in Outcome.HomeOfficeOffence.values:
        raise CaseworkError("home_office_offence", one_of(Outcome.HomeOfficeOffence.values))
    club = club or Outcome.Club.NOT_KNOWN
    if club not in Outcome.Club.values:
        raise CaseworkError("club", one_of(Outcome.Club.values))
    return {
        "offence": offence,
        "home_office_offence": home_office_offence,
        "club": club,
        "force": text_field("force", force, required=False, max_length=200),
        "reference": text_field("reference", reference, max_length=100),
    }


def _outcome_write(
    *, case: Case, by: User, kind: str, subject: Subject | None, note: str, **fields: Any
) -> Outcome:
    outcome = Outcome.objects.create(
        case=case, subject=subject, kind=kind, note=note, by=by, at=timezone.now(), **fields
    )
    about = f" ({subject.label})" if subject else ""
    detail = f"{outcome.get_kind_display()}{about}"
    if kind == Outcome.Kind.ARREST:
        group = outcome.get_home_office_offence_display()
        offence = f"{outcome.offence} ({group})" if outcome.offence else group
        force = f", {outcome.force}" if outcome.force else ""
        detail += (
            f": {offence}, club: {outcome.get_club_display().lower()}{force}, "
            f"ref. {outcome.reference}"
        )
    case_event(case, by=by, action="outcome", detail=detail)
    return outcome


@transaction.atomic
def outcome_record(
    *,
    case: Case,
    by: User,
    kind: str,
    subject: Subject | None = None,
    offence: str = "",
    home_office_offence: str = "",
    club: str = "",
    force: str = "",
    reference: str = "",
    note: str = "",
) -> Outcome:
    """Ejection, arrest, a referral for a court banning order, or no further action (a club ban
    is proposed through case_ban_propose, into the register's approval flow). An arrest may be
    recorded before the person is known (a subject added later)."""
    if kind == Outcome.Kind.CLUB_BAN:
        raise CaseworkError("kind", _("propose a club ban from the subject, for approval"))
    if kind not in Outcome.Kind.values:
        raise CaseworkError("kind", one_of(Outcome.Kind.values))
    if subject is not None and subject.case_id != case.pk:
        raise CaseworkNotFound("subject", _("a subject of this case"))
    note = text_field("note", note, required=kind == Outcome.Kind.NO_FURTHER_ACTION)
    if subject is not None and subject.kind not in PEOPLE:
        raise CaseworkConflict("subject", _("choose the person this concerns, not material"))
    needs_person = kind not in (Outcome.Kind.NO_FURTHER_ACTION, Outcome.Kind.ARREST)
    if needs_person and subject is None:
        raise CaseworkError("subject", _("choose the person this concerns"))
    fields: dict[str, str] = {}
    if kind == Outcome.Kind.ARREST:
        fields = _arrest_fields(
            case=case, offence=offence, home_office_offence=home_office_offence, club=club,
            force=force, reference=reference,
        )  # fmt: skip
    return _outcome_write(case=case, by=by, kind=kind, subject=subject, note=note, **fields)


def case_of_entry(entry: LogEntry) -> Case | None:
    """The open case about this log entry, the newest if several."""
    return entry.cases.filter(status=Case.Status.OPEN).order_by("-opened_at", "-pk").first()


@transaction.atomic
def arrest_record(
    *,
    entry: LogEntry,
    by: User,
    home_office_offence: str,
    club: str,
    reference: str,
    force: str = "",
    note: str = "",
) -> Outcome:
    """An arrest recorded from its log entry in one step: into the entry's open case, or a case
    opened for it. Who was arrested may be added to the case when known."""
    if entry.kind != LogEntry.Kind.REPORT:
        raise CaseworkConflict("entry", _("an arrest is recorded from a report in the log"))
    case = case_of_entry(entry)
    if case is None:
        what = entry.category.name if entry.category else "Report"
        case = case_open(
            by=by, fixture=entry.fixture, entries=[entry], title=f"{what}: log entry #{entry.seq}"
        )
    fields = _arrest_fields(
        case=case, offence=entry.category.offence if entry.category else "",
        home_office_offence=home_office_offence, club=club, force=force, reference=reference,
    )  # fmt: skip
    return _outcome_write(
        case=case, by=by, kind=Outcome.Kind.ARREST, subject=None,
        note=text_field("note", note, required=False), **fields,
    )  # fmt: skip


# The police's arrest return for a match: its arrests go into one case of the match, with no log
# entry; an arrest already recorded (from its log entry, or an earlier return) by its reference
# is not counted twice.
ARREST_RETURN = "Arrests returned by the police"
# An arrest's time, if given, is within this of kick-off (before: at the turnstiles or on the
# way; after: at the station or in town).
ARREST_WINDOW = timedelta(hours=12)


def _arrested_at(time: datetime | None) -> str:
    return f"arrested at {clock.local(time):%d/%m/%Y %H:%M}" if time else ""


@dataclass(frozen=True)
class ArrestsImported:
    case: Case | None  # None: every arrest was already recorded
    created: int
    already: list[str]  # the references already recorded for the match


def _arrest_return_case(fixture: Fixture, by: User) -> Case:
    case = (
        Case.objects.filter(fixture=fixture, title=ARREST_RETURN, status=Case.Status.OPEN)
        .order_by("pk")
        .first()
    )
    if case is None:
        case = Case.objects.create(
            organisation_id=fixture.ground.organisation_id, fixture=fixture, title=ARREST_RETURN,
            opened_by=by, opened_at=timezone.now(),
        )  # fmt: skip
        case_event(case, by=by, action="opened", detail=f"{ARREST_RETURN}; no log entry")
    return case


@transaction.atomic
def arrests_import(*, fixture: Fixture, by: User, rows: Sequence[ArrestRow]) -> ArrestsImported:
    """The police's arrests for a match, checked whole before anything is written (every problem
    listed, ArrestsConflict, 409: the arrests conflict with each other or with the match's time).
    An arrest whose reference the match already has is skipped and named."""
    errors: list[str] = []
    seen: dict[str, str] = {}
    kickoff = clock.local(fixture.kickoff)
    for row in rows:
        if row.reference in seen:
            first = seen[row.reference]
            said = _("'%(reference)s' is also at %(first)s")
            errors.append(
                f"{row.where}: reference: {said % {'reference': row.reference, 'first': first}}"
            )
        seen.setdefault(row.reference, row.where)
        if row.time is not None and abs(row.time - fixture.kickoff) > ARREST_WINDOW:
            said = _("%(time)s is not within %(hours)s hours of kick-off (%(kickoff)s)") % {
                "time": clock.iso(row.time, "minutes"),
                "hours": ARREST_WINDOW.seconds // 3600,
                "kickoff": f"{kickoff:%d/%m/%Y %H:%M}",
            }
            errors.append(f"{row.where}: time: {said}")
    if errors:
        raise ArrestsConflict(errors)
    recorded = set(
        Outcome.objects.filter(case__fixture=fixture, kind=Outcome.Kind.ARREST).values_list(
            "reference", flat=True
        )
    )
    new = [row for row in rows if row.reference not in recorded]
    already = [row.reference for row in rows if row.reference in recorded]
    if not new:
        return ArrestsImported(case=None, created=0, already=already)
    case = _arrest_return_case(fixture, by)
    now = timezone.now()
    Outcome.objects.bulk_create(
        [
            Outcome(
                case=case,
                kind=Outcome.Kind.ARREST,
                home_office_offence=row.offence_group,
                club=row.club,
                reference=row.reference,
                by=by,
                at=now,
                note=_arrested_at(row.time),
            )
            for row in new
        ]
    )
    case_event(case, by=by, action="arrests imported",
           detail=f"{len(new)} arrests from the police's return (refs. "
           f"{', '.join(row.reference for row in new)})"[:4000])  # fmt: skip
    return ArrestsImported(case=case, created=len(new), already=already)


def _names(subject: Subject) -> tuple[str, str, date | None]:
    if subject.kind == Subject.Kind.PERSON and subject.person is not None:
        person = subject.person
        return person.first_names, person.last_name, person.date_of_birth
    if subject.kind == Subject.Kind.TICKET_HOLDER and subject.ticket is not None:
        if subject.ticket.holder_erased_at is not None:
            raise CaseworkError(
                "subject", _("the ticket holder's name and date of birth were erased by retention")
            )
        *first, last = subject.ticket.holder_name.split() or [""]
        return " ".join(first), last, subject.ticket.holder_dob
    raise CaseworkError(
        "subject", _("a club ban needs a known person or an identified ticket holder")
    )


def ban_grounds(case: Case, grounds: str) -> str:
    """The ban's grounds: the officer's words, then the case and the log entries (with their
    hashes) they rest on, so the register's grounds point at the record."""
    entries = case.entries.select_related("category").order_by("seq")
    lines = [
        f"- log entry #{e.seq} ({e.category.name if e.category else e.kind}, "
        f"{timezone.localtime(e.observed_at):%d/%m/%Y %H:%M}), hash {e.hash}"
        for e in entries
    ]
    return (
        f"{grounds}\n\nCase #{case.pk} ({case.fixture}): {case.title}\n" + "\n".join(lines)
    ).strip()


@transaction.atomic
def case_ban_propose(
    *,
    case: Case,
    subject: Subject,
    by: User,
    grounds: str,
    starts_on: date | None,
    is_life: bool = False,
    ends_on: date | None = None,
    scope: str = Ban.Scope.CLUB,
) -> Outcome:
    """A club ban for a subject, proposed into the register's approval flow (bans.services): it
    does nothing until another user approves it. Its grounds name the case's log entries."""
    if subject.case_id != case.pk:
        raise CaseworkError("subject", _("a subject of this case"))
    grounds = text_field("grounds", grounds)
    first, last, dob = _names(subject)
    if not first or not last:
        raise CaseworkError("subject", _("the ticket holder's name has no first and last name"))
    ban = ban_propose(
        by=by,
        organisation=case.organisation,
        first_names=first,
        last_name=last,
        date_of_birth=dob,
        type=Ban.Type.CLUB_BAN,
        scope=scope,
        starts_on=starts_on,
        ends_on=ends_on,
        is_life=is_life,
        grounds=ban_grounds(case, grounds),
        ground=case.fixture.ground if scope == Ban.Scope.GROUND else None,
    )
    outcome = Outcome.objects.create(
        case=case, subject=subject, kind=Outcome.Kind.CLUB_BAN, ban=ban, note=grounds, by=by,
        at=timezone.now(),
    )  # fmt: skip
    term = "life" if is_life else f"until {ends_on:%d/%m/%Y}" if ends_on else ""
    case_event(case, by=by, action="club ban proposed",
           detail=f"ban #{ban.pk} ({term}) for {subject.label}; awaiting approval")  # fmt: skip
    return outcome


# --- evidence and custody -----------------------------------------------------------------------


def custody_record_write(
    *,
    user: User | None,
    action: str,
    evidence: Evidence | None = None,
    photo: Photo | None = None,
    case: Case | None = None,
    detail: str = "",
) -> CustodyRecord:
    """The one way a custody record is written (user None: the scheduled task)."""
    item = evidence or photo
    return CustodyRecord.objects.create(
        at=timezone.now(), user=user, username=user.get_username() if user else SCHEDULED,
        action=action,
        evidence=evidence, photo=photo, case=case, sha256=getattr(item, "sha256", ""),
        detail=detail[:300],
    )  # fmt: skip


@transaction.atomic
def case_bundle_export(*, case: Case, by: User) -> IO[bytes]:
    """The case as a ZIP in a temporary file (casework.bundle); each evidence file's export is
    in its custody, and the case's history holds the ZIP's SHA-256."""
    from .bundle import CHUNK, bundle_build
    from .selectors import case_detail

    detail = case_detail(case)
    data = bundle_build(case, detail, by=by)
    digest = hashlib.sha256()
    while chunk := data.read(CHUNK):
        digest.update(chunk)
    data.seek(0)
    for evidence in detail["evidence"]:
        custody_record_write(user=by, action=CustodyRecord.Action.EXPORT, evidence=evidence,
                             case=case, detail=f"case bundle of case #{case.pk}")  # fmt: skip
    for photo in detail["photos"]:
        custody_record_write(user=by, action=CustodyRecord.Action.EXPORT, photo=photo, case=case,
                             detail=f"case bundle of case #{case.pk}")  # fmt: skip
    case_event(case, by=by, action="bundle exported",
           detail=f"ZIP of {len(detail['evidence'])} evidence items and "
           f"{len(detail['photos'])} stewards' photos, SHA-256 "
           f"{digest.hexdigest()}")  # fmt: skip
    return data
