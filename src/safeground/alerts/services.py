"""Push alerts: phones subscribing, an alert for each broadcast, task, flashpoint warning and
M/ETHANE report, what the push services and the phones answer, and an urgent broadcast raised
to the supervisors when it is not acknowledged in time."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.crypto import constant_time_compare, salted_hmac
from django.utils.translation import gettext as _

from safeground import clock
from safeground.accounts.models import Role, User
from safeground.accounts.permissions import role_holders
from safeground.decisions.gate_warnings import gate_warning_text
from safeground.decisions.models import MethaneReport
from safeground.decisions.parts import METHANE_PARTS
from safeground.decisions.selectors import commanders
from safeground.entry.selectors import gate_warnings_started
from safeground.errors import SafegroundError
from safeground.incidents.broadcasting import broadcast_ack
from safeground.incidents.flashpoint import flashpoint_text_in_language
from safeground.incidents.models import Broadcast, BroadcastAck, LogEntry
from safeground.incidents.selectors import current_posts, entry_zone_ids, post_zone_ids, zone_map
from safeground.live.catalogue import ALERT_OVERDUE
from safeground.live.events import Audience, publish
from safeground.matches.models import Fixture
from safeground.signing import b64url_decode

from . import push
from .models import Alert, AlertRecipient, PushSubscription

RECEIPT_SALT = "safeground.alerts.receipt"
# The page a notification opens, where it is not the steward's.
PAGES: dict[str, str] = {Alert.Kind.MAJOR_INCIDENT: "major_incident"}


class AlertError(SafegroundError):
    """A subscription or a phone's receipt refused; `field` names what is wrong."""

    code = "alert_refused"


class AlertNotFound(AlertError):
    """What it names is not there (or not one you may see) (404)."""

    status = 404


class AlertConflict(AlertError):
    """Well formed, but refused by the state of things (409)."""

    status = 409


class AlertForbidden(AlertError):
    """Not yours to do (403)."""

    status = 403


# --- subscriptions ------------------------------------------------------------------------------


def _key(field: str, value: str, size: int) -> str:
    try:
        raw = b64url_decode(value)
    except ValueError:
        raw = b""
    if len(raw) != size or (size == 65 and raw[0] != 4):
        raise AlertError(
            f"keys.{field}", _("is not a base64url %(size)s-byte key") % {"size": size}
        )
    return value


def _push_service(endpoint: str) -> str:
    """Only known push services (SAFEGROUND_PUSH_HOSTS): the server posts to whatever a
    subscription names, so it must never be a machine inside the club's network."""
    try:
        parts = urlsplit(endpoint)
        host = (parts.hostname or "").lower()
    except ValueError:  # a bracketed host that is no IP address, a bad port
        raise AlertError("endpoint", _("is not a URL a push service gives")) from None
    allowed = any(
        host == known or host.endswith(f".{known}") for known in settings.SAFEGROUND_PUSH_HOSTS
    )
    # Plain http only to this machine (a push service for tests and the benchmark).
    schemes = {"https", "http"} if host in {"127.0.0.1", "localhost", "::1"} else {"https"}
    if not allowed or parts.scheme not in schemes:
        # Well formed, but not a service this installation sends to (SSRF guard): refused, 403.
        raise AlertForbidden(
            "endpoint",
            _("'%(host)s' is not a known push service") % {"host": host or endpoint[:60]},
        )
    return endpoint


@transaction.atomic
def subscription_save(
    *, user: User, endpoint: str, p256dh: str, auth: str, device: str = "", language: str = ""
) -> PushSubscription:
    """A phone's subscription, kept under whoever subscribed it last (a phone handed on), and
    the language its alerts are worded in (the page's when it subscribed)."""
    subscription, _created = PushSubscription.objects.update_or_create(
        endpoint=_push_service(endpoint),
        defaults={
            "user": user,
            "p256dh": _key("p256dh", p256dh, 65),
            "auth": _key("auth", auth, 16),
            "device": device[:200],
            "language": language if translation.check_for_language(language) else "",
        },
    )
    return subscription


def subscription_remove(*, user: User, endpoint: str) -> int:
    removed, _ = PushSubscription.objects.filter(user=user, endpoint=endpoint).delete()
    return removed


# --- alerts -------------------------------------------------------------------------------------


def receipt_token(recipient_id: int) -> str:
    """What a phone's service worker shows to report an alert delivered or acknowledged: the
    recipient's id and a MAC of it, so the report needs no session (a locked phone's may be
    gone) and reaches only that one recipient's record."""
    mac = salted_hmac(RECEIPT_SALT, str(recipient_id), algorithm="sha256").hexdigest()[:32]
    return f"{recipient_id}.{mac}"


def receipt_recipient_id(token: str) -> int | None:
    number, _, _mac = token.partition(".")
    if not number.isdigit() or len(number) > 18:
        return None
    return int(number) if constant_time_compare(token, receipt_token(int(number))) else None


# An alert's (title, body), said in the active language: once in the site's for the record, and
# once in each language its phones were subscribed in.
Words = Callable[[], tuple[str, str]]


def _payloads(alert: Alert, title: str, body: str) -> Callable[[int], bytes]:
    """What the service worker reads for each recipient (under 4 kB, the push services' limit),
    in the active language: the alert's part made once, each recipient's token added (a
    broadcast to 500: one reverse() and one translation per language, not 500)."""
    shared = json.dumps(
        {
            "kind": alert.kind,
            "title": title[:200],
            "body": body[:500],
            "tag": f"{alert.kind}-{alert.broadcast_id or alert.entry_id or alert.pk}",
            "url": reverse(PAGES.get(alert.kind, "steward_page"), args=[alert.fixture_id]),
            "receipt": reverse("api:alert_receipt"),
            "broadcast": alert.broadcast_id,
            "acknowledge": alert.kind == Alert.Kind.BROADCAST,
            "acknowledge_label": _("Acknowledge"),
            "urgent": alert.urgent,
        },
        separators=(",", ":"),
    )[:-1]

    def payload(recipient_id: int) -> bytes:
        token = json.dumps(receipt_token(recipient_id))
        return f'{shared},"token":{token}}}'.encode()

    return payload


def alert_send(
    *,
    fixture: Fixture,
    kind: str,
    user_ids: set[int],
    words: Words,
    urgent: bool,
    broadcast: Broadcast | None = None,
    entry: LogEntry | None = None,
) -> Alert:
    """An alert for these people, pushed to each of their subscribed phones off this thread,
    each phone's in its own language."""
    with translation.override(settings.LANGUAGE_CODE):
        title, body = words()
    with transaction.atomic():
        alert = Alert.objects.create(
            fixture=fixture,
            kind=kind,
            broadcast=broadcast,
            entry=entry,
            title=title[:200],
            body=body[:500],
            urgent=urgent,
        )
        subscriptions: dict[int, list[PushSubscription]] = {}
        for subscription in PushSubscription.objects.filter(user_id__in=user_ids):
            subscriptions.setdefault(subscription.user_id, []).append(subscription)
        recipients = AlertRecipient.objects.bulk_create(
            AlertRecipient(
                alert=alert,
                user_id=user_id,
                devices=len(subscriptions.get(user_id, ())),
                failed="" if user_id in subscriptions else "no phone subscribed",
            )
            for user_id in sorted(user_ids)
        )
        said: dict[str, Callable[[int], bytes]] = {}

        def payload(recipient_id: int, language: str) -> bytes:
            if language not in said:
                with translation.override(language or settings.LANGUAGE_CODE):
                    said[language] = _payloads(alert, *words())
            return said[language](recipient_id)

        pushes = [
            push.Push(
                recipient_id=recipient.pk,
                subscription_id=subscription.pk,
                endpoint=subscription.endpoint,
                p256dh=subscription.p256dh,
                auth=subscription.auth,
                payload=payload(recipient.pk, subscription.language),
            )
            for recipient in recipients
            for subscription in subscriptions.get(recipient.user_id, ())
        ]
        transaction.on_commit(lambda: push.send(pushes, outcomes_record), robust=True)
    return alert


def outcomes_record(outcomes: list[push.Outcome]) -> None:
    """What the push services answered: sent, expired (the subscription dropped), or failed
    for good (the reason kept on the recipients no phone took it for)."""
    now = timezone.now()
    sent = {o.push.recipient_id for o in outcomes if o.sent}
    working = {o.push.subscription_id for o in outcomes if o.sent}
    expired = {o.push.subscription_id for o in outcomes if o.expired}
    final = settings.SAFEGROUND_PUSH_ATTEMPTS
    failed = {
        o.push.recipient_id: o.error or f"push service answered {o.status}"
        for o in outcomes
        if not o.sent and (not o.retry or o.push.attempt >= final)
    }
    with transaction.atomic():
        if sent:
            AlertRecipient.objects.filter(pk__in=sent, sent_at__isnull=True).update(
                sent_at=now, failed=""
            )
            PushSubscription.objects.filter(pk__in=working).update(last_ok_at=now)
        if expired:
            PushSubscription.objects.filter(pk__in=expired).delete()
        for reason in set(failed.values()):
            ids = [pk for pk, why in failed.items() if why == reason and pk not in sent]
            AlertRecipient.objects.filter(pk__in=ids, sent_at__isnull=True).update(
                failed=reason[:200]
            )


def broadcast_words(broadcast: Broadcast) -> str:
    """A broadcast sent without words of its own carries its script's name (in English): the
    reader gets it in theirs, as the steward page says it; words of its own are as written."""
    label = Broadcast.Script(broadcast.script).label
    return _(label) if broadcast.text == label else broadcast.text


def alert_broadcast(broadcast: Broadcast) -> Alert:
    """A broadcast to its stewards' phones (incidents.hooks: after it committed)."""
    urgent = broadcast.script != Broadcast.Script.ALL_CLEAR
    where = f" · {broadcast.zone.name}" if broadcast.zone else ""
    return alert_send(
        fixture=broadcast.fixture,
        kind=Alert.Kind.BROADCAST,
        user_ids=set(broadcast.recipient_ids),
        words=lambda: (_("Control room") + where, broadcast_words(broadcast)),
        urgent=urgent,
        broadcast=broadcast,
    )


def alert_task(assignment: LogEntry) -> Alert | None:
    """A task given to someone: to their phones."""
    if assignment.assignee_id is None:
        return None
    report = assignment.concerns or assignment

    def words() -> tuple[str, str]:
        # A seeded category's name in the reader's language, as the steward page names it.
        category = _(report.category.name) if report.category else ""
        return (
            _("Task for you: #%(seq)s") % {"seq": report.seq},
            " · ".join(filter(None, [category, report.text])) or _("Task"),
        )

    return alert_send(
        fixture=assignment.fixture,
        kind=Alert.Kind.TASK,
        user_ids={assignment.assignee_id},
        words=words,
        urgent=True,
        entry=report,
    )


def alert_warning(warning: LogEntry) -> Alert | None:
    """A warning, a flashpoint's or a gate's: to the phones of the stewards whose post covers its
    zone (a gate's: the zones the gate serves), each phone's in its own language."""
    fixture = warning.fixture
    covered = set(entry_zone_ids(warning, zone_map(fixture)))
    user_ids = {
        user_id
        for user_id, post in current_posts(fixture).items()
        if covered & post_zone_ids(fixture, post)
    }
    if not user_ids:
        return None
    return alert_send(
        fixture=fixture,
        kind=Alert.Kind.WARNING,
        user_ids=user_ids,
        words=_gate_warning_words(warning) if warning.gate_id else _flashpoint_words(warning),
        urgent=True,
        entry=warning,
    )


def _flashpoint_words(warning: LogEntry) -> Words:
    return lambda: (_("Flashpoint warning"), flashpoint_text_in_language(warning.text))


def _gate_warning_words(warning: LogEntry) -> Words:
    """A gate warning said again in each phone's language from the figures it was written with
    (the log keeps it in the site's): the one of the warnings that started at its gate at its
    moment whose words the entry has."""
    started = gate_warnings_started(
        fixture_id=warning.fixture_id, gate_id=warning.gate_id or 0, since=warning.observed_at
    )
    with translation.override(settings.LANGUAGE_CODE):
        told = next((w for w in started if gate_warning_text(w) == warning.text), None)

    def words() -> tuple[str, str]:
        return _("Gate warning"), gate_warning_text(told) if told else warning.text

    return words


def alert_major_incident(report: MethaneReport) -> Alert:
    """A major incident declared, or its M/ETHANE report corrected (decisions.hooks: after it
    committed): to the commanders' phones and the loggists', whoever made it among them."""
    fixture = report.fixture
    loggists = role_holders(fixture.ground.organisation_id, Role.CONTROL_OPERATOR)
    user_ids = {user.pk for user in commanders(fixture)} | {m.user_id for m in loggists}

    def words() -> tuple[str, str]:
        title = (
            _("Major incident declared") if report.corrects_id is None else _("M/ETHANE corrected")
        )
        said = [(p.letter, getattr(report, p.key)) for p in METHANE_PARTS]
        return title, " · ".join(f"{letter}: {text}" for letter, text in said if text)

    return alert_send(
        fixture=fixture,
        kind=Alert.Kind.MAJOR_INCIDENT,
        user_ids=user_ids,
        words=words,
        urgent=True,
        entry=report.entry,
    )


# --- what the phones say ------------------------------------------------------------------------


def receipt_record(*, recipient_id: int, state: str) -> AlertRecipient:
    """A phone's service worker: the alert arrived (delivered), or its notification's
    Acknowledge was tapped (the broadcast's own acknowledgement, as from the page)."""
    recipient = (
        AlertRecipient.objects.select_related("alert__broadcast__fixture", "user")
        .filter(pk=recipient_id)
        .first()
    )
    if recipient is None:
        raise AlertNotFound("token", _("no such alert"))
    now = timezone.now()
    AlertRecipient.objects.filter(pk=recipient_id, delivered_at__isnull=True).update(
        delivered_at=now
    )
    if state == "acknowledged":
        broadcast = recipient.alert.broadcast
        if broadcast is None or recipient.alert.kind != Alert.Kind.BROADCAST:
            raise AlertConflict("state", _("only a broadcast is acknowledged"))
        broadcast_ack(broadcast=broadcast, user=recipient.user)
    return recipient


def seen_record(*, broadcast: Broadcast, user: User) -> int:
    """The steward page showed the broadcast to its recipient."""
    return AlertRecipient.objects.filter(
        alert__broadcast=broadcast,
        alert__kind=Alert.Kind.BROADCAST,
        user=user,
        seen_at__isnull=True,
    ).update(seen_at=timezone.now())


# --- not acknowledged in time -------------------------------------------------------------------


def _supervisors(fixture: Fixture) -> set[int]:
    return set(
        role_holders(fixture.ground.organisation_id, Role.STEWARD_SUPERVISOR).values_list(
            "user_id", flat=True
        )
    )


def overdue_raise(*, now: datetime | None = None) -> list[Alert]:
    """Raise each urgent broadcast not acknowledged by all within SAFEGROUND_ALERT_ACK_SECONDS
    to the match's supervisors (live, and on their phones) and the control room's screen. Once
    each: the conditional update decides, so two processes never raise one twice."""
    now = now or timezone.now()
    due = now - timedelta(seconds=settings.SAFEGROUND_ALERT_ACK_SECONDS)
    stale = due - timedelta(hours=1)  # a broadcast of an hour ago is no longer news
    raised = []
    candidates = Alert.objects.filter(
        kind=Alert.Kind.BROADCAST,
        urgent=True,
        raised_at__isnull=True,
        created_at__lte=due,
        created_at__gt=stale,
    ).select_related("broadcast", "fixture__ground")
    for alert in candidates:
        if _raise_one(alert, now):
            raised.append(alert)
    return raised


def _raise_one(alert: Alert, now: datetime) -> bool:
    broadcast = alert.broadcast
    assert broadcast is not None
    acked = set(BroadcastAck.objects.filter(broadcast=broadcast).values_list("user_id", flat=True))
    waiting = sorted(set(broadcast.recipient_ids) - acked)
    with transaction.atomic():
        if not Alert.objects.filter(pk=alert.pk, raised_at__isnull=True).update(raised_at=now):
            return False
        if not waiting:
            return False  # everyone acknowledged: marked, never looked at again
        names = dict(User.objects.filter(pk__in=waiting).values_list("pk", "username"))
        supervisors = _supervisors(alert.fixture)
        publish(
            fixture_id=alert.fixture_id,
            type=ALERT_OVERDUE,
            data={
                "broadcast": broadcast.pk,
                "text": broadcast.text,
                "sent_at": clock.iso(broadcast.sent_at),
                "raised_at": clock.iso(now),
                "unacknowledged": [names[pk] for pk in waiting if pk in names],
            },
            # The control room (the home club's screens) and every supervisor.
            audience=Audience(home_only=True, user_ids=frozenset(supervisors)),
        )
        if supervisors:
            alert_send(
                fixture=alert.fixture,
                kind=Alert.Kind.OVERDUE,
                user_ids=supervisors,
                words=lambda: (
                    _("Not acknowledged: %(count)s stewards") % {"count": len(waiting)},
                    broadcast_words(broadcast),
                ),
                urgent=True,
                broadcast=broadcast,
            )
    return True
