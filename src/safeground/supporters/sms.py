"""The club's text line: the provider posts each inbound text here (sms_adapters: its own fields
and signature), and the line answers by text with a reference, or asks for the place when the
message has none, in the language the text was written in (Welsh or English).

Texts are read as fans write them (reading.py): the category from any word of it, the most
severe winning; the place in any of its spellings at this ground. A message with no category
word is still a report ("other"): a supporter in trouble does not remember the keyword list.
A text delivered late by a congested network is taken, its delay shown to the control room and
told to the texter: nothing a supporter sends is dropped for being slow. The provider's message
id keeps a text the provider delivers twice to one report.
"""

import logging
import re
from dataclasses import replace
from datetime import datetime, timedelta

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.csrf import csrf_exempt

from safeground import clock
from safeground.errors import SafegroundError
from safeground.limits import counts
from safeground.venues.models import Block, Ground

from .abuse import TooManyReports, refusal_words
from .models import Reporter
from .reading import GroundPlan, Reading, message_read
from .selectors import match_on_now
from .services import (
    Sender,
    report_receive,
    reporter_language_keep,
    reporter_texts_choose,
    text_awaiting_keep,
    text_awaiting_take,
)
from .sms_adapters import (
    Inbound,
    TextGroundUnknown,
    TextNotSigned,
    TextRefused,
    adapter,
    secret,
)
from .texts import text_send

logger = logging.getLogger(__name__)

MAX_BODY = 1000
# A whole message asking for no texts, or for texts again (the words SMS providers honour).
STOP_WORDS = {"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT"}
START_WORDS = {"START", "UNSTOP"}
MAX_AGE = timedelta(minutes=10)  # how long a text without a place waits for the next to give it
LATE = timedelta(minutes=2)  # a text delivered later than this after it was sent says so
SEEN_FOR = 2 * 24 * 3600  # a provider retries a webhook for up to a day (Vonage): ids kept two


def _refused(error: SafegroundError) -> JsonResponse:
    return JsonResponse(error.to_json(), status=error.status)


@csrf_exempt
def inbound(request: HttpRequest, ground_code: str) -> HttpResponse:
    """One inbound text: checked (set-up, signature, fields), read, reported, answered."""
    try:
        line = adapter()
        if request.method not in line.methods:
            response = JsonResponse(
                {"code": "sms_refused", "field": "method", "detail": "/".join(line.methods)},
                status=405,
            )
            response["Allow"] = ", ".join(line.methods)
            return response
        if not line.signed(request, secret()):
            raise TextNotSigned(
                "signature", "the signature does not match SAFEGROUND_SUPPORTERS_SMS_SECRET"
            )
        ground = Ground.objects.filter(code=ground_code).first()
        if ground is None:
            raise TextGroundUnknown("ground", f"no ground '{ground_code}'")
        text = _checked(line.read(request))
    except TextRefused as error:
        if error.status == 403:
            logger.warning("text line refused a text: %s", error)
        return _refused(error)
    seen = f"sms-seen:{line.name}:{text.message_id}"
    if text.message_id and not counts().add(seen, 1, SEEN_FOR):
        # Delivered again by the provider: taken and answered the first time.
        return line.answer("", "")
    try:
        choice = text.body.strip(" .!").upper()
        if choice in STOP_WORDS or choice in START_WORDS:
            return line.answer(_choose(ground, text.phone, texts=choice in START_WORDS), "")
        reply, reference = _report(ground, text)
    except Exception:
        counts().delete(seen)  # not taken: the provider's retry is taken instead
        raise
    return line.answer(reply, reference)


def _checked(text: Inbound) -> Inbound:
    if not re.fullmatch(r"\+?[0-9]{6,15}", text.phone):
        raise TextRefused("from", "a phone number, digits with an optional leading +")
    if not text.body.strip() or len(text.body) > MAX_BODY:
        raise TextRefused("body", f"the message's text, 1 to {MAX_BODY} characters")
    return text


def _choose(ground: Ground, phone: str, *, texts: bool) -> str:
    """STOP: the phone asked not to be texted (the answer is the provider's to deliver, as its
    STOP handling does); START: texts again, and this one says so."""
    reporter = reporter_texts_choose(sender=Sender(Reporter.Channel.SMS, phone), texts=texts)
    with translation.override(reporter.language or settings.LANGUAGE_CODE):
        if not texts:
            return _("You will get no more texts from us. Text START to hear how your reports end.")
        reply = _("You will get texts about your reports again. Text STOP to stop them.")
    text_send(reporter=reporter, ground=ground, body=reply)
    return reply


def _report(ground: Ground, text: Inbound) -> tuple[str, str]:
    """Report the text and answer it (by text too), in its language: the reference, or what
    is missing."""
    plan = GroundPlan.of_ground(ground)
    parsed = message_read(text.body, plan)
    now = timezone.now()
    late = text.sent_at is not None and now - text.sent_at > LATE
    fixture = match_on_now(ground)
    sender = Sender(Reporter.Channel.SMS, text.phone)
    reporter = Reporter.objects.filter(key=sender.key).first()
    language = "cy" if parsed.language == "cy" else settings.LANGUAGE_CODE
    if not parsed.text and reporter is not None and reporter.language:
        language = reporter.language  # a place alone ("N-L3") says nothing of the language
    block = Block.objects.filter(ground=ground, code=parsed.block).first() if parsed.known else None
    if block is not None and reporter is not None:
        awaiting = text_awaiting_take(reporter=reporter, ground=ground, since=now - MAX_AGE)
        parsed = _completed(parsed, awaiting)
    words = parsed.text
    if late and text.sent_at is not None:
        with translation.override(settings.LANGUAGE_CODE):  # the control room's reading
            words = f"{words} {_delay_note(text.sent_at, now)}".strip()
    reference = ""
    with translation.override(language):
        if fixture is None:
            reply = _("There is no match on at %(ground)s now. In an emergency call 999.") % {
                "ground": ground.name
            }
        elif block is None:
            reply = _where(parsed, plan, ground)
        else:
            try:
                report = report_receive(
                    fixture=fixture,
                    sender=sender,
                    block=block,
                    row=parsed.row,
                    seat=parsed.seat,
                    category=parsed.category,
                    text=words,
                    sent_at=text.sent_at,
                )
            except TooManyReports as refused:
                reply = refusal_words(refused)
            except SafegroundError as error:
                reply = _("Your report could not be taken: %(why)s") % {"why": error.message}
            else:
                reference, reporter = report.reference, report.reporter
                reply = _taken(reference, stopped=reporter.texts_stopped_at is not None)
        if late and text.sent_at is not None:
            minutes = max(1, round((now - text.sent_at).total_seconds() / 60))
            reply += " " + ngettext(
                "Your text reached us %(minutes)s minute after you sent it.",
                "Your text reached us %(minutes)s minutes after you sent it.",
                minutes,
            ) % {"minutes": minutes}
    if reporter is None:
        reporter, _made = Reporter.objects.get_or_create(
            key=sender.key, defaults={"channel": Reporter.Channel.SMS, "phone": text.phone}
        )
    reporter_language_keep(sender=sender, language=language)
    if fixture is not None and not parsed.block:
        text_awaiting_keep(reporter=reporter, ground=ground, category=parsed.category, text=words)
    text_send(reporter=reporter, ground=ground, body=reply)
    return reply, reference


def _taken(reference: str, *, stopped: bool) -> str:
    if stopped:
        # The phone texted STOP: nothing here may promise a text it will not get.
        return _(
            "Thank you. Report %(reference)s is with the control room. You asked for no texts, "
            "so we will not text you about it: text START to hear how it ends."
        ) % {"reference": reference}
    return _(
        "Thank you. Report %(reference)s is with the control room. "
        "We will text you when it is dealt with."
    ) % {"reference": reference}


def _where(parsed: Reading, plan: GroundPlan, ground: Ground) -> str:
    """The question for the place, with a real place of this ground as its example."""
    block, row, seat = plan.example()
    unknown = ""
    if parsed.block:
        unknown = _("We cannot find block %(block)s at %(ground)s. ") % {
            "block": parsed.block,
            "ground": ground.name,
        }
    return unknown + _(
        "Where are you? Text again with the block, row and seat, e.g. "
        "block %(block)s row %(row)s seat %(seat)s, and what you saw."
    ) % {"block": block, "row": row or "A", "seat": seat}


def _delay_note(sent_at: datetime, now: datetime) -> str:
    minutes = max(1, round((now - sent_at).total_seconds() / 60))
    return ngettext(
        "(sent %(time)s, reached us %(minutes)s minute late)",
        "(sent %(time)s, reached us %(minutes)s minutes late)",
        minutes,
    ) % {"time": clock.hhmm(sent_at), "minutes": minutes}


def _completed(parsed: Reading, awaiting: tuple[str, str] | None) -> Reading:
    """A text giving the place completes the one before that gave none: its category (unless
    this one names its own) and its words before these."""
    if awaiting is None:
        return parsed
    category, words = awaiting
    return replace(
        parsed,
        category=parsed.category if parsed.keyword else category,
        text=" ".join(w for w in (words, parsed.text) if w),
    )
