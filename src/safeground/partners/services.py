"""Telling partner agencies: each broadcast, warning, kick-off change and M/ETHANE report becomes
a signed CAP 1.2 alert, written once after the write it tells of has committed (the hooks), and
pushed to the organisations that asked for pushes, off the request's path (push.py)."""

import secrets
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from safeground import clock
from safeground.accounts.models import Organisation, User
from safeground.accounts.permissions import can_set_partner_push
from safeground.errors import Forbidden, NotFound
from safeground.incidents.models import Broadcast, LogEntry
from safeground.incidents.selectors import place_label
from safeground.languages import other_languages
from safeground.matches.models import Fixture
from safeground.venues.models import Concourse, Gate, Ground, Stand, Zone

from . import cap, push, signing
from .models import PartnerAlert, PushEndpoint


def ground_languages(ground: Ground) -> list[str]:
    """English, and each other language the ground's venue file names its places in (Welsh at
    a Welsh ground): its alerts carry one <info> in each."""
    spoken = [settings.LANGUAGE_CODE]
    for code in other_languages():
        named = (
            model.objects.filter(ground=ground, names__has_key=code).exists()
            for model in (Stand, Zone, Gate, Concourse)
        )
        if any(named):
            spoken.append(code)
    return spoken


def _identifier(fixture: Fixture, source: str, source_id: int) -> str:
    return f"safeground-{fixture.pk}-{source}-{source_id}-{secrets.token_hex(4)}"


def _whole_seconds(moment: datetime) -> datetime:
    return moment.replace(microsecond=0)


def _write(
    *, fixture: Fixture, source: str, source_id: int, home_only: bool, message: cap.Message
) -> PartnerAlert:
    english, *others = message.said
    alert = PartnerAlert(
        fixture=fixture,
        identifier=message.identifier,
        sent_at=_whole_seconds(message.sent),
        msg_type=message.msg_type,
        references=message.update_of,
        source=source,
        source_id=source_id,
        home_only=home_only,
        headline=english.headline[:300],
        headline_names={
            said.language.lower(): said.headline[:300]
            for said in others
            if said.headline != english.headline
        },
        xml=signing.signed(cap.cap_xml(message)),
    )
    try:
        with transaction.atomic():
            alert.save()
    except IntegrityError:  # heard twice: told once
        return PartnerAlert.objects.get(source=source, source_id=source_id)
    push.alert_push(alert)
    return alert


def _earlier(source: str, source_id: int) -> PartnerAlert | None:
    return PartnerAlert.objects.filter(source=source, source_id=source_id).first()


def _reference(alert: PartnerAlert | None) -> str:
    return cap.reference(alert.identifier, alert.sent_at) if alert else ""


# --- the hooks ----------------------------------------------------------------------------------


def broadcast_told(broadcast: Broadcast) -> PartnerAlert:
    """A broadcast to the stewards (incidents.hooks.broadcast_sent, after commit)."""
    fixture = broadcast.fixture
    ground = fixture.ground
    label = Broadcast.Script(broadcast.script).label

    def say(language: str) -> cap.Said:
        # A script sent without words of its own says the script's name in the reader's words.
        words = _(label) if broadcast.text == label else broadcast.text
        place = broadcast.zone.local_name if broadcast.zone else _("the whole ground")
        return cap.Said(
            language=language,
            event=_("Control-room broadcast"),
            headline=f"{_(label)} · {place}",
            description=words,
            instruction=words,
            area=f"{ground.name} · {place}",
        )

    message = cap.Message(
        identifier=_identifier(fixture, PartnerAlert.Source.BROADCAST, broadcast.pk),
        sent=broadcast.sent_at,
        grade=cap.BROADCAST_GRADES[broadcast.script],
        said=cap.in_languages(ground_languages(ground), say),
        restriction=cap.restriction(fixture.title, home_only=False),
    )
    return _write(
        fixture=fixture,
        source=PartnerAlert.Source.BROADCAST,
        source_id=broadcast.pk,
        home_only=False,
        message=message,
    )


def warning_told(warning: LogEntry) -> PartnerAlert | None:
    """A warning written to the log (incidents.hooks.warning_written, after commit): a flashpoint
    or a gate's, told from its text and its place, whatever wrote it."""
    if warning.kind != LogEntry.Kind.WARNING:
        return None
    fixture = warning.fixture
    ground = fixture.ground
    first_line = warning.text.strip().splitlines()[0] if warning.text.strip() else ""

    def say(language: str) -> cap.Said:
        place = place_label(warning) or _("the whole ground")
        return cap.Said(
            language=language,
            event=_("Warning"),
            headline=f"{_('Warning')} · {place}: {first_line}"[:160],
            description=warning.text,
            area=f"{ground.name} · {place}",
        )

    message = cap.Message(
        identifier=_identifier(fixture, PartnerAlert.Source.WARNING, warning.pk),
        sent=warning.logged_at,
        grade=cap.WARNING_GRADE,
        said=cap.in_languages(ground_languages(ground), say),
        restriction=cap.restriction(fixture.title, home_only=warning.home_only),
        incidents=[f"log-{fixture.pk}-{warning.seq}"],
    )
    return _write(
        fixture=fixture,
        source=PartnerAlert.Source.WARNING,
        source_id=warning.pk,
        home_only=warning.home_only,
        message=message,
    )


def kickoff_told(decision: Any) -> PartnerAlert | None:
    """A decision recorded (decisions.hooks.decision_recorded, after commit): told only when it
    changes the kick-off. A later change (an amendment among them) is an Update of the match's
    last kick-off alert; an amendment that leaves the delay as it was tells nothing."""
    minutes = decision.kickoff_delay
    if minutes is None:
        return None
    amended = decision.amends
    if amended is not None and amended.kickoff_delay == minutes:
        return None
    fixture = decision.fixture
    ground = fixture.ground
    earlier = (
        PartnerAlert.objects.filter(fixture=fixture, source=PartnerAlert.Source.KICKOFF)
        .order_by("-sent_at", "-pk")
        .first()
    )
    kickoff = clock.hhmm(fixture.kickoff + timedelta(minutes=minutes))

    def say(language: str) -> cap.Said:
        if minutes:
            headline = _("Kick-off put back %(minutes)s minutes, to %(time)s") % {
                "minutes": minutes,
                "time": kickoff,
            }
        else:
            headline = _("Kick-off at its planned time, %(time)s") % {"time": kickoff}
        return cap.Said(
            language=language,
            event=_("Kick-off changed"),
            headline=headline,
            description=decision.decision,
            area=ground.name,
        )

    message = cap.Message(
        identifier=_identifier(fixture, PartnerAlert.Source.KICKOFF, decision.pk),
        sent=decision.entry.logged_at,
        grade=cap.KICKOFF_GRADE,
        said=cap.in_languages(ground_languages(ground), say),
        restriction=cap.restriction(fixture.title, home_only=decision.home_only),
        update_of=_reference(earlier),
    )
    return _write(
        fixture=fixture,
        source=PartnerAlert.Source.KICKOFF,
        source_id=decision.pk,
        home_only=decision.home_only,
        message=message,
    )


def methane_told(report: Any) -> PartnerAlert:
    """An M/ETHANE report made or corrected (decisions.hooks.methane_reported, after commit); a
    correction is an Update of the report's alert."""
    fixture = report.fixture
    corrected = (
        _earlier(PartnerAlert.Source.METHANE, report.corrects.pk) if report.corrects else None
    )
    message = cap.methane_message(
        identifier=_identifier(fixture, PartnerAlert.Source.METHANE, report.pk),
        made_at=report.made_at,
        match=fixture.title,
        ground=fixture.ground.name,
        languages=ground_languages(fixture.ground),
        parts=report.parts,
        home_only=report.home_only,
        corrects=_reference(corrected),
    )
    return _write(
        fixture=fixture,
        source=PartnerAlert.Source.METHANE,
        source_id=report.pk,
        home_only=report.home_only,
        message=message,
    )


# --- push endpoints -----------------------------------------------------------------------------


def push_endpoint_set(*, user: User, organisation: str, url: str) -> PushEndpoint:
    """Where the organisation's system takes its alerts (its lead sets it): https, or plain http
    to this machine only (a test's receiver)."""
    found = Organisation.objects.filter(slug=organisation).first()
    if found is None:
        raise NotFound("organisation", _("no organisation '%(slug)s'") % {"slug": organisation})
    if not can_set_partner_push(user, found.pk):
        raise Forbidden("organisation", _("you may not set where this organisation's alerts go"))
    push.check_url(url)
    endpoint, _created = PushEndpoint.objects.update_or_create(
        organisation=found, defaults={"url": url, "set_by": user}
    )
    return endpoint
