"""CAP 1.2 messages (OASIS Common Alerting Protocol) from plain values: one builder per kind of
alert, each answering a `Message` that `cap_xml` writes with cap-tools' bindings. Nothing here
reads the database: the services hand in what each alert says, in each language.

What each kind's urgency, severity and certainty are, and why: docs/adr/0028.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from cap_tools.models import (
    Alert,
    Area,
    Category,
    Certainty,
    Info,
    MsgType,
    Parameter,
    ResponseType,
    Scope,
    Severity,
    Status,
    Urgency,
    Value,
    ValueName,
)
from django.conf import settings
from django.utils.translation import gettext as _
from django.utils.translation import override
from xsdata.formats.dataclass.serializers import XmlSerializer
from xsdata.formats.dataclass.serializers.config import SerializerConfig
from xsdata.models.datatype import XmlDateTime

from safeground import clock

NAMESPACE = "urn:oasis:names:tc:emergency:cap:1.2"
SENDER_NAME = "Safeground"


class CapTime(XmlDateTime):
    """A CAP time: the schema takes only `2016-10-26T20:50:00+00:00`, never xsdata's `Z`."""

    __slots__ = ()

    def __str__(self) -> str:
        if self.offset == 0:
            return XmlDateTime.__str__(self._replace(offset=None)) + "+00:00"
        return XmlDateTime.__str__(self)


def cap_time(moment: datetime) -> CapTime:
    """The moment on the ground's clock, with its offset, to the second."""
    return CapTime(*XmlDateTime.from_string(clock.iso(moment, "seconds")))


@dataclass(frozen=True)
class Said:
    """One language's words of an alert (one CAP <info>)."""

    language: str  # a CAP language code: en-GB, cy
    event: str
    headline: str
    description: str
    area: str
    instruction: str = ""
    parameters: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Grade:
    """How pressing, how bad and how sure (CAP's urgency, severity, certainty) and what to do."""

    categories: tuple[Category, ...]
    urgency: Urgency
    severity: Severity
    certainty: Certainty
    response: ResponseType


@dataclass(frozen=True)
class Message:
    identifier: str
    sent: datetime
    grade: Grade
    said: Sequence[Said]
    restriction: str
    update_of: str = ""  # the earlier alert's reference ("sender,identifier,sent"): an Update
    note: str = ""
    incidents: Sequence[str] = field(default=())

    @property
    def msg_type(self) -> str:
        return MsgType.UPDATE.value if self.update_of else MsgType.ALERT.value


def reference(identifier: str, sent: datetime) -> str:
    """How a later alert names this one (CAP <references>)."""
    return f"{settings.SAFEGROUND_CAP_SENDER},{identifier},{cap_time(sent)}"


def cap_language(code: str) -> str:
    """A Django language code as CAP writes it (RFC 3066): en-gb -> en-GB."""
    language, _sep, region = code.partition("-")
    return f"{language}-{region.upper()}" if region else language


def in_languages(languages: Sequence[str], say: Callable[[str], Said]) -> list[Said]:
    """`say(cap language)` in each of the ground's languages, under that language's words."""
    said = []
    for code in languages:
        with override(code):
            said.append(say(cap_language(code)))
    return said


def cap_xml(message: Message) -> bytes:
    """The alert as CAP 1.2 XML (unsigned): status Actual, scope Restricted, one <info> per
    language."""
    grade = message.grade
    alert = Alert(
        identifier=message.identifier,
        sender=settings.SAFEGROUND_CAP_SENDER,
        sent=cap_time(message.sent),
        status=Status.ACTUAL,
        msg_type=MsgType(message.msg_type),
        scope=Scope.RESTRICTED,
        restriction=message.restriction,
        note=message.note or None,
        references=message.update_of or None,
        incidents=" ".join(message.incidents) or None,
        infos=[
            Info(
                language=said.language,
                categories=list(grade.categories),
                event=said.event,
                response_types=[grade.response],
                urgency=grade.urgency,
                severity=grade.severity,
                certainty=grade.certainty,
                sender_name=SENDER_NAME,
                headline=said.headline[:160],
                description=said.description or None,
                instruction=said.instruction or None,
                parameters=[
                    Parameter(ValueName(name), Value(value)) for name, value in said.parameters
                ],
                areas=[Area(area_desc=said.area)],
            )
            for said in message.said
        ],
    )
    config = SerializerConfig(indent=None, xml_declaration=False)
    return XmlSerializer(config=config).render(alert, ns_map={None: NAMESPACE}).encode()


# --- the kinds ----------------------------------------------------------------------------------

# Broadcasts by script (docs/adr/0028): what the control room told its stewards to do.
BROADCAST_GRADES = {
    "evacuate": Grade(
        (Category.SAFETY,),
        Urgency.IMMEDIATE,
        Severity.SEVERE,
        Certainty.OBSERVED,
        ResponseType.EVACUATE,
    ),
    "lockdown": Grade(
        (Category.SECURITY,),
        Urgency.IMMEDIATE,
        Severity.SEVERE,
        Certainty.OBSERVED,
        ResponseType.SHELTER,
    ),
    "hold": Grade(
        (Category.SAFETY,),
        Urgency.IMMEDIATE,
        Severity.MODERATE,
        Certainty.OBSERVED,
        ResponseType.AVOID,
    ),
    "all_clear": Grade(
        (Category.SAFETY,), Urgency.PAST, Severity.MINOR, Certainty.OBSERVED, ResponseType.ALL_CLEAR
    ),
    "free": Grade(
        (Category.SAFETY,),
        Urgency.IMMEDIATE,
        Severity.MODERATE,
        Certainty.OBSERVED,
        ResponseType.MONITOR,
    ),
}
WARNING_GRADE = Grade(
    (Category.SECURITY,),
    Urgency.EXPECTED,
    Severity.MODERATE,
    Certainty.LIKELY,
    ResponseType.MONITOR,
)
KICKOFF_GRADE = Grade(
    (Category.SAFETY,), Urgency.FUTURE, Severity.MINOR, Certainty.OBSERVED, ResponseType.PREPARE
)
METHANE_GRADE = Grade(
    (Category.SAFETY, Category.RESCUE),
    Urgency.IMMEDIATE,
    Severity.SEVERE,
    Certainty.OBSERVED,
    ResponseType.PREPARE,
)


def restriction(match: str, *, home_only: bool) -> str:
    """Who may read the alert (CAP <restriction>), in English: it is the alert's, not an
    <info>'s, and has no language of its own."""
    with override(settings.LANGUAGE_CODE):
        if home_only:
            return _("For the home club's staff only: %(match)s") % {"match": match}
        return _("For the organisations working %(match)s only; not for the public") % {
            "match": match
        }


def methane_message(
    *,
    identifier: str,
    made_at: datetime,
    match: str,
    ground: str,
    languages: Sequence[str],
    parts: Callable[[], Sequence[tuple[str, object, str]]],
    home_only: bool,
    corrects: str = "",
) -> Message:
    """An M/ETHANE report (Major incident, Exact location, Type, Hazards, Access, Number of
    casualties, Emergency services): each part a line of the description and a parameter
    (`METHANE.<key>`) a partner's system can read; `parts()` is asked in each language for its
    labels. A correction is an Update naming the report it corrects (`corrects`, a reference)."""

    def say(language: str) -> Said:
        lines = [(key, str(label), text) for key, label, text in parts()]
        headline = _("M/ETHANE report corrected") if corrects else _("M/ETHANE report")
        return Said(
            language=language,
            event=_("Major incident (M/ETHANE)"),
            headline=f"{headline}: {match}",
            description="\n".join(f"{label}: {text}" for _key, label, text in lines if text),
            area=ground,
            parameters=tuple((f"METHANE.{key}", text) for key, _label, text in lines if text),
        )

    return Message(
        identifier=identifier,
        sent=made_at,
        grade=METHANE_GRADE,
        said=in_languages(languages, say),
        restriction=restriction(match, home_only=home_only),
        update_of=corrects,
    )
