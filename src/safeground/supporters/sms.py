"""The club's text line: the provider posts each inbound text here (the generic form: `from`,
`body`, `time`), signed with the shared secret; the line answers by text with a reference, or
asks for the place when the message has none.

Messages are read as clubs advertise them, keyword first and place anywhere:
"RACISM block 112 row K seat 23 man in red hat", "SFCReport smoking block 108", "Help! block 108
row C". A message with no keyword is still a report ("other"): a supporter in trouble does not
remember the keyword list.
"""

import hashlib
import hmac
import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from safeground.errors import SafegroundError
from safeground.venues.models import Block, Ground

from .abuse import TooManyReports, refusal_words
from .models import Reporter
from .selectors import match_on_now
from .services import (
    Sender,
    report_receive,
    reporter_texts_choose,
    text_awaiting_keep,
    text_awaiting_take,
)
from .texts import text_send

# Keyword -> category (categories.py). Longest first, so "FOUL LANGUAGE" wins over "FOUL".
KEYWORDS = {
    "RACISM": "abuse-racist",
    "RACIST": "abuse-racist",
    "HOMOPHOBIA": "abuse-homophobic",
    "HOMOPHOBIC": "abuse-homophobic",
    "TRANSPHOBIA": "abuse-homophobic",
    "ANTISEMITISM": "abuse-antisemitic",
    "ANTISEMITIC": "abuse-antisemitic",
    "SEXISM": "abuse-sexist",
    "SEXIST": "abuse-sexist",
    "DISABILITY": "abuse-disability",
    "DISCRIMINATION": "abuse-other",
    "ABUSE": "abuse-other",
    "FOUL LANGUAGE": "other",
    "VIOLENCE": "violence",
    "FIGHT": "violence",
    "FIGHTING": "violence",
    "THREAT": "violence",
    "MISSILE": "missile",
    "THROWING": "missile",
    "PYRO": "pyrotechnics",
    "FLARE": "pyrotechnics",
    "MEDICAL": "medical",
    "CRUSH": "crowding",
    "CROWDING": "crowding",
    "DRUNK": "drunk",
    "SMOKING": "smoking",
    "STANDING": "standing",
    "HELP": "other",
}
_KEYWORD = re.compile(
    r"^\W*(?:[A-Z]{2,5}REPORT\b\W*)?("
    + "|".join(sorted((re.escape(k) for k in KEYWORDS), key=len, reverse=True))
    + r")\b\W*",
    re.IGNORECASE,
)
_PREFIX = re.compile(r"^\W*[A-Z]{2,5}REPORT\b\W*", re.IGNORECASE)
_BLOCK = re.compile(r"\b(?:block|blk|section)\b\s*:?\s*([A-Z0-9][A-Z0-9-]{0,19})", re.IGNORECASE)
_ROW = re.compile(r"\brow\b\s*:?\s*([A-Z]{1,3}|[0-9]{1,3})\b", re.IGNORECASE)
_SEAT = re.compile(r"\bseat\b\s*(?:no\.?\s*)?:?\s*([0-9]{1,4})\b", re.IGNORECASE)
MAX_BODY = 1000
# A whole message asking for no texts, or for texts again (the words SMS providers honour).
STOP_WORDS = {"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT"}
START_WORDS = {"START", "UNSTOP"}
MAX_AGE = timedelta(minutes=10)  # a text older than this is a replay (or a queue stuck)


@dataclass(frozen=True)
class Parsed:
    category: str
    block: str
    row: str
    seat: str
    text: str
    keyword: bool = False  # the category named, not "other" for want of a keyword


def message_parse(body: str) -> Parsed:
    """The category (the keyword, else "other"), the place wherever it is, and the rest."""
    rest = body.strip()
    category = "other"
    if keyword := _KEYWORD.match(rest):
        category = KEYWORDS[re.sub(r"\s+", " ", keyword[1].upper())]
        rest = rest[keyword.end() :]
    else:
        rest = _PREFIX.sub("", rest, count=1)
    found = {}
    for name, pattern in (("block", _BLOCK), ("row", _ROW), ("seat", _SEAT)):
        match = pattern.search(rest)
        found[name] = match[1].upper() if match else ""
        if match:
            rest = rest[: match.start()] + " " + rest[match.end() :]
    text = re.sub(r"\s+", " ", rest).strip(" ,.;:-!")
    return Parsed(
        category, found["block"], found["row"], found["seat"], text, keyword=keyword is not None
    )


def signature_valid(raw: bytes, given: str) -> bool:
    secret = settings.SAFEGROUND_SUPPORTERS_SMS_SECRET
    if not secret or not given:
        return False
    expected = hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()
    return hmac.compare_digest(f"sha256={expected}", given.strip())


def _refused(field: str, detail: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"code": "sms_refused", "field": field, "detail": detail}, status=status)


def _sent_at(value: str) -> datetime | None:
    if value.isdigit():
        return datetime.fromtimestamp(int(value), tz=timezone.get_current_timezone())
    moment = parse_datetime(value)
    return moment if moment and timezone.is_aware(moment) else None


@csrf_exempt
@require_POST
def inbound(request: HttpRequest, ground_code: str) -> JsonResponse:
    """One inbound text: checked (signature, fields, age), read, reported, answered."""
    if request.content_type != "application/x-www-form-urlencoded":
        # The signature is over the raw body, which a multipart body does not keep once read.
        return _refused("body", "send the text as application/x-www-form-urlencoded", 415)
    if not signature_valid(request.body, request.headers.get("X-Safeground-Signature", "")):
        return _refused("signature", "the signature does not match the shared secret", 403)
    ground = Ground.objects.filter(code=ground_code).first()
    if ground is None:
        return _refused("ground", f"no ground '{ground_code}'", 404)
    phone = request.POST.get("from", "").strip()
    body = request.POST.get("body", "")
    sent = _sent_at(request.POST.get("time", "").strip())
    if not re.fullmatch(r"\+?[0-9]{6,15}", phone):
        return _refused("from", "a phone number, digits with an optional leading +")
    if not body.strip() or len(body) > MAX_BODY:
        return _refused("body", f"the message's text, 1 to {MAX_BODY} characters")
    if sent is None:
        return _refused("time", "when it was sent: ISO 8601 with its zone, or Unix seconds")
    if abs(timezone.now() - sent) > MAX_AGE:
        return _refused("time", "sent too long ago (or in the future): not taken")
    choice = body.strip(" .!").upper()
    if choice in STOP_WORDS or choice in START_WORDS:
        reply = _choose(ground, phone, texts=choice in START_WORDS)
        return JsonResponse({"reply": reply, "reference": ""})
    reply, reference = _report(ground, phone, body)
    return JsonResponse({"reply": reply, "reference": reference})


def _choose(ground: Ground, phone: str, *, texts: bool) -> str:
    """STOP: the phone asked not to be texted (the answer is the provider's to deliver, as its
    STOP handling does); START: texts again, and this one says so."""
    reporter = reporter_texts_choose(sender=Sender(Reporter.Channel.SMS, phone), texts=texts)
    if not texts:
        return _("You will get no more texts from us. Text START to hear how your reports end.")
    reply = _("You will get texts about your reports again. Text STOP to stop them.")
    text_send(reporter=reporter, ground=ground, body=reply)
    return reply


def _report(ground: Ground, phone: str, body: str) -> tuple[str, str]:
    """Report the text and answer it (by text too): the reference, or what is missing."""
    parsed = message_parse(body)
    fixture = match_on_now(ground)
    sender = Sender(Reporter.Channel.SMS, phone)
    reporter = Reporter.objects.filter(key=sender.key).first()
    block = (
        Block.objects.filter(ground=ground, code__iexact=parsed.block).first()
        if parsed.block
        else None
    )
    if block is not None and reporter is not None:
        awaiting = text_awaiting_take(
            reporter=reporter, ground=ground, since=timezone.now() - MAX_AGE
        )
        parsed = _completed(parsed, awaiting)
    reference = ""
    if fixture is None:
        reply = _("There is no match on at %(ground)s now. In an emergency call 999.") % {
            "ground": ground.name
        }
    elif block is None:
        where = _("We cannot find block %(block)s. ") % {"block": parsed.block}
        reply = (where if parsed.block else "") + _(
            "Where are you? Text again with the keyword, block, row and seat, e.g. "
            "RACISM block 112 row K seat 23 and what you saw."
        )
    else:
        try:
            report = report_receive(
                fixture=fixture,
                sender=sender,
                block=block,
                row=parsed.row,
                seat=parsed.seat,
                category=parsed.category,
                text=parsed.text,
            )
        except TooManyReports as refused:
            reply = refusal_words(refused)
        except SafegroundError as error:
            reply = _("Your report could not be taken: %(why)s") % {"why": error.message}
        else:
            reference, reporter = report.reference, report.reporter
            reply = _(
                "Thank you. Report %(reference)s is with the control room. "
                "We will text you when it is dealt with."
            ) % {"reference": reference}
    if reporter is None:
        reporter, _made = Reporter.objects.get_or_create(
            key=sender.key, defaults={"channel": Reporter.Channel.SMS, "phone": phone}
        )
    if fixture is not None and not parsed.block:
        text_awaiting_keep(
            reporter=reporter, ground=ground, category=parsed.category, text=parsed.text
        )
    text_send(reporter=reporter, ground=ground, body=reply)
    return reply, reference


def _completed(parsed: Parsed, awaiting: tuple[str, str] | None) -> Parsed:
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
