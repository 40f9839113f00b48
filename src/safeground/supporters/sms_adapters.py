"""The text line's inbound webhook in each SMS provider's own fields and signature.

`SAFEGROUND_SUPPORTERS_SMS_PROVIDER` names the provider whose webhook the line takes (one per
installation), signed with `SAFEGROUND_SUPPORTERS_SMS_SECRET`:

- "safeground" (the default, and the first format, kept): a form with `from`, `body` and `time`
  (ISO 8601 with its zone, or Unix seconds), `X-Safeground-Signature: sha256=<hex>`, the
  HMAC-SHA256 of the raw body under the secret; an optional `id` is the provider's message id.
- "twilio": Twilio's Messaging webhook, a form with `From`, `To`, `Body`, `MessageSid` (Twilio
  sends no sent time: the text counts as sent when it arrives); `X-Twilio-Signature`, the
  base64 HMAC-SHA1 under the account's auth token of the full URL Twilio called followed by
  every POST parameter's name and value, sorted by name.
- "vonage": Vonage's (Nexmo's) inbound SMS webhook, by GET or POST (form or JSON): `msisdn`,
  `to`, `text`, `messageId`, `message-timestamp` (UTC, "YYYY-MM-DD HH:MM:SS"), signed with the
  account's signature secret in `sig` (Vonage's signed webhooks): every other parameter sorted
  by name as `&name=value` (a value's `&` and `=` written `_`), then the MD5 of that and the
  secret ("md5hash", Vonage's default) or its HMAC under the secret
  (`SAFEGROUND_SUPPORTERS_SMS_SIGNATURE_METHOD`: md5, sha1, sha256, sha512).

Each adapter checks the signature, reads the fields into one `Inbound`, and answers as its
provider expects; the line's reply goes out as every text does (texts.text_send).
"""

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import ClassVar

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from safeground.errors import SafegroundError, one_of


class TextRefused(SafegroundError):
    """An inbound text not taken: nothing written, no reply (400)."""

    code = "sms_refused"


class TextNotSigned(TextRefused):
    status = 403


class TextLineNotSetUp(TextNotSigned):
    """The line's own settings are missing or wrong: the operator's to fix (docs/deploy.md)."""


class TextNotForm(TextRefused):
    status = 415


class TextGroundUnknown(TextRefused):
    status = 404


@dataclass(frozen=True)
class Inbound:
    phone: str
    body: str
    sent_at: datetime | None  # when the provider says it was sent; None: it does not say
    message_id: str  # the provider's id of the message ("" when it gives none)


class Adapter:
    name: ClassVar[str]
    methods: ClassVar[tuple[str, ...]] = ("POST",)

    def signed(self, request: HttpRequest, secret: str) -> bool:
        raise NotImplementedError

    def read(self, request: HttpRequest) -> Inbound:
        raise NotImplementedError

    def answer(self, reply: str, reference: str) -> HttpResponse:
        return JsonResponse({"reply": reply, "reference": reference})

    def form(self, request: HttpRequest) -> QueryDict:
        if request.content_type != "application/x-www-form-urlencoded":
            # The signature is over the raw body or its fields, which a multipart body does not
            # keep once read.
            raise TextNotForm("body", "send the text as application/x-www-form-urlencoded")
        return request.POST


def _field(params: QueryDict | dict[str, str], name: str) -> str:
    value = params.get(name, "")
    if not str(value).strip():
        raise TextRefused(name, "missing: this provider's webhook always sends it")
    return str(value)


class Safeground(Adapter):
    name = "safeground"

    def signed(self, request: HttpRequest, secret: str) -> bool:
        self.form(request)
        given = request.headers.get("X-Safeground-Signature", "").strip()
        expected = hmac.new(secret.encode(), request.body, hashlib.sha256).hexdigest()
        return bool(given) and hmac.compare_digest(f"sha256={expected}", given)

    def read(self, request: HttpRequest) -> Inbound:
        params = self.form(request)
        sent = _moment(params.get("time", "").strip())
        if sent is None:
            raise TextRefused("time", "when it was sent: ISO 8601 with its zone, or Unix seconds")
        return Inbound(
            params.get("from", "").strip(), params.get("body", ""), sent, params.get("id", "")
        )


class Twilio(Adapter):
    name = "twilio"

    def signed(self, request: HttpRequest, secret: str) -> bool:
        given = request.headers.get("X-Twilio-Signature", "").strip()
        params = self.form(request)
        expected = twilio_signature(secret, public_url(request), params)
        return bool(given) and hmac.compare_digest(expected, given)

    def read(self, request: HttpRequest) -> Inbound:
        params = self.form(request)
        return Inbound(
            _field(params, "From").strip(),
            _field(params, "Body"),
            None,
            params.get("MessageSid", "") or params.get("SmsMessageSid", ""),
        )

    def answer(self, reply: str, reference: str) -> HttpResponse:
        # Empty TwiML: the reply is sent (and recorded) as every text is, not by Twilio twice.
        return HttpResponse(
            '<?xml version="1.0" encoding="UTF-8"?><Response></Response>',
            content_type="text/xml",
        )


def twilio_signature(token: str, url: str, params: QueryDict | dict[str, str]) -> str:
    """Twilio's X-Twilio-Signature of a form POST to `url`."""
    signed = url
    for name in sorted(params):
        values = params.getlist(name) if isinstance(params, QueryDict) else [params[name]]
        signed += "".join(name + value for value in sorted(values))
    digest = hmac.new(token.encode(), signed.encode(), hashlib.sha1).digest()
    return base64.b64encode(digest).decode()


class Vonage(Adapter):
    name = "vonage"
    methods = ("GET", "POST")
    METHODS: ClassVar[tuple[str, ...]] = ("md5hash", "md5", "sha1", "sha256", "sha512")

    def params(self, request: HttpRequest) -> dict[str, str]:
        if request.method == "GET":
            return _flat(request.GET)
        if request.content_type == "application/json":
            try:
                document = json.loads(request.body)
            except ValueError as error:
                raise TextRefused("body", "not JSON") from error
            if not isinstance(document, dict):
                raise TextRefused("body", "a JSON object")
            return {str(k): str(v) for k, v in document.items()}
        return _flat(self.form(request))

    def signed(self, request: HttpRequest, secret: str) -> bool:
        params = self.params(request)
        given = params.pop("sig", "").strip().lower()
        method = settings.SAFEGROUND_SUPPORTERS_SMS_SIGNATURE_METHOD
        if method not in self.METHODS:
            raise TextLineNotSetUp(
                "SAFEGROUND_SUPPORTERS_SMS_SIGNATURE_METHOD", one_of(self.METHODS)
            )
        expected = vonage_signature(secret, params, method)
        return bool(given) and hmac.compare_digest(expected, given)

    def read(self, request: HttpRequest) -> Inbound:
        params = self.params(request)
        phone = _field(params, "msisdn").strip()
        stamp = params.get("message-timestamp", "").strip()
        sent = None
        if stamp:
            sent = parse_datetime(stamp.replace(" ", "T"))
            if sent is None:
                raise TextRefused("message-timestamp", "UTC as YYYY-MM-DD HH:MM:SS")
            sent = sent if timezone.is_aware(sent) else sent.replace(tzinfo=UTC)
        return Inbound(
            phone if phone.startswith("+") else f"+{phone}",
            _field(params, "text"),
            sent,
            params.get("messageId", ""),
        )


def _flat(params: QueryDict) -> dict[str, str]:
    return {name: str(params.get(name, "")) for name in params}


def vonage_signature(secret: str, params: dict[str, str], method: str = "md5hash") -> str:
    """Vonage's `sig` of these parameters (without `sig`), lower-case hex."""
    signed = "".join(
        f"&{name}={params[name].replace('&', '_').replace('=', '_')}" for name in sorted(params)
    )
    if method == "md5hash":
        return hashlib.md5((signed + secret).encode()).hexdigest()
    return hmac.new(secret.encode(), signed.encode(), method).hexdigest()


ADAPTERS: dict[str, type[Adapter]] = {a.name: a for a in (Safeground, Twilio, Vonage)}


def adapter() -> Adapter:
    """The configured provider's adapter, or a refusal naming the setting that is wrong."""
    name = settings.SAFEGROUND_SUPPORTERS_SMS_PROVIDER
    if name not in ADAPTERS:
        raise TextLineNotSetUp("SAFEGROUND_SUPPORTERS_SMS_PROVIDER", one_of(ADAPTERS))
    return ADAPTERS[name]()


def secret() -> str:
    """What the provider signs with, or a refusal naming the setting when it is not set."""
    if not settings.SAFEGROUND_SUPPORTERS_SMS_SECRET:
        raise TextLineNotSetUp(
            "SAFEGROUND_SUPPORTERS_SMS_SECRET",
            "not set: the text line takes no text until the secret its provider signs with is "
            "set (docs/deploy.md, the text line)",
        )
    return str(settings.SAFEGROUND_SUPPORTERS_SMS_SECRET)


def public_url(request: HttpRequest) -> str:
    """The full address the provider called: SAFEGROUND_SUPPORTERS_SMS_PUBLIC_URL (scheme and
    host, as the provider is configured with) when set, behind a proxy that rewrites them."""
    base = settings.SAFEGROUND_SUPPORTERS_SMS_PUBLIC_URL.rstrip("/")
    return f"{base}{request.get_full_path()}" if base else request.build_absolute_uri()


def _moment(value: str) -> datetime | None:
    if value.isdigit():
        return datetime.fromtimestamp(int(value), tz=UTC)
    moment = parse_datetime(value)
    return moment if moment and timezone.is_aware(moment) else None
