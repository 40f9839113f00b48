"""Texts to reporters on the club's text line: a small provider interface and its backends.

`SAFEGROUND_SUPPORTERS_SMS_BACKEND` names one. "record" keeps each text in the database and sends
it nowhere (development, the demo, the tests: no network). A club's provider (Twilio, Esendex,
...) is a class with the same `send` added here; every text is recorded either way, so what was
sent to a phone is in its subject-access export and goes with it at retention.
"""

from typing import Protocol

from django.conf import settings
from django.utils import timezone

from safeground.venues.models import Ground

from .models import Reporter, TextMessage

MAX_BODY = 480  # three SMS segments


class Provider(Protocol):
    def send(self, to: str, body: str) -> None: ...


class Recording:
    """Sends nothing: the TextMessage row written for every text is the whole record."""

    def send(self, to: str, body: str) -> None:
        return None


BACKENDS: dict[str, type[Provider]] = {"record": Recording}


def provider() -> Provider:
    name = settings.SAFEGROUND_SUPPORTERS_SMS_BACKEND
    if name not in BACKENDS:
        raise ValueError(
            f"SAFEGROUND_SUPPORTERS_SMS_BACKEND={name!r}: one of {', '.join(BACKENDS)}"
        )
    return BACKENDS[name]()


def text_send(*, reporter: Reporter, ground: Ground | int, body: str) -> TextMessage | None:
    """Text a reporter on the text line of the ground (nothing for a seat page's reporter, one
    erased, or one who texted STOP: they asked not to be contacted)."""
    if (
        reporter.channel != Reporter.Channel.SMS
        or not reporter.phone
        or reporter.texts_stopped_at is not None
    ):
        return None
    body = body[:MAX_BODY]
    ground_id = ground.pk if isinstance(ground, Ground) else ground
    message = TextMessage.objects.create(
        reporter=reporter, ground_id=ground_id, to=reporter.phone, body=body, sent_at=timezone.now()
    )
    provider().send(reporter.phone, body)
    return message
