"""The CAP feed for partner agencies' systems: poll the list (an Atom feed, newest first, with
`since`), fetch each signed alert, download the certificate that verifies them, and say where
alerts are to be pushed. The sharing rules decide what each organisation sees; an alert it may
not see is a 404, as one that is not there."""

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils import timezone
from lxml import etree
from ninja import Field, Router, Schema
from ninja.security import django_auth
from pydantic import AwareDatetime

from safeground import clock
from safeground.errors import answers
from safeground.request_body import Body

from . import push, selectors, services, signing
from .models import PartnerAlert

router = Router(tags=["partners"], auth=django_auth)

ATOM = "http://www.w3.org/2005/Atom"
CAP_TYPE = "application/cap+xml"


def _atom(request: HttpRequest, alerts: list[PartnerAlert]) -> bytes:
    def add(parent: Any, name: str, text: str = "", **attributes: str) -> Any:
        element = etree.SubElement(parent, f"{{{ATOM}}}{name}", attributes)
        element.text = text or None
        return element

    feed = etree.Element(f"{{{ATOM}}}feed", nsmap={None: ATOM})
    add(feed, "id", request.build_absolute_uri(reverse("api:partners_cap_feed")))
    add(feed, "title", "Safeground CAP alerts")
    add(feed, "updated", clock.iso(alerts[0].sent_at if alerts else timezone.now(), "seconds"))
    add(feed, "link", rel="self", href=request.build_absolute_uri())
    for alert in alerts:
        href = request.build_absolute_uri(
            reverse("api:partners_cap_alert", args=[alert.identifier])
        )
        entry = add(feed, "entry")
        add(entry, "id", href)
        add(entry, "title", alert.headline)
        add(entry, "updated", clock.iso(alert.sent_at, "seconds"))
        add(entry, "link", rel="alternate", type=CAP_TYPE, href=href)
        add(entry, "category", term=alert.msg_type)
        add(entry, "category", term=alert.source, scheme="urn:safeground:cap:source")
        add(add(entry, "author"), "name", "Safeground")
    return bytes(etree.tostring(feed, xml_declaration=True, encoding="UTF-8"))


@router.get(
    "/partners/cap/",
    url_name="partners_cap_feed",
    openapi_extra={"responses": {"200": {"content": {"application/atom+xml": {}}}}},
)
def cap_feed(request: HttpRequest, since: AwareDatetime | None = None) -> HttpResponse:
    """The CAP alerts your organisations may see, newest first (at most 200), as Atom; `since`
    (with its offset): only those sent at or after it."""
    alerts = list(selectors.feed(request.user, since=since))
    return HttpResponse(_atom(request, alerts), content_type="application/atom+xml")


@router.get(
    "/partners/cap/certificate.pem",
    auth=None,
    url_name="partners_cap_certificate",
    openapi_extra={"responses": {"200": {"content": {"application/x-pem-file": {}}}}},
)
def cap_certificate(request: HttpRequest) -> HttpResponse:
    """The X.509 certificate whose key signs every alert (XML-DSig, RSA-SHA256): public."""
    return HttpResponse(signing.certificate_pem(), content_type="application/x-pem-file")


@router.get(
    "/partners/cap/{identifier}.xml",
    url_name="partners_cap_alert",
    openapi_extra={"responses": {"200": {"content": {CAP_TYPE: {}}}}},
)
def cap_alert(request: HttpRequest, identifier: str) -> HttpResponse:
    """One alert as signed when it was written, the same bytes every time."""
    alert = selectors.alert_read(request.user, identifier)
    return HttpResponse(bytes(alert.xml), content_type=CAP_TYPE)


class PushIn(Body):
    organisation: str = Field(min_length=1, max_length=80, description="the organisation's slug")
    url: str = Field(
        max_length=500, pattern=push.URL_PATTERN, description="the https URL alerts are POSTed to"
    )


class PushOut(Schema):
    organisation: str
    url: str


@router.put(
    "/partners/cap/push",
    url_name="partners_cap_push",
    response=PushOut,
    openapi_extra=answers(push.PushUrlRefused),
)
def cap_push_set(request: HttpRequest, payload: PushIn) -> dict[str, str]:
    """Where your organisation's system takes its alerts: each new one it may see is POSTed
    there (Content-Type application/cap+xml), tried again when it does not answer. Its safety
    officer or police commander sets it."""
    endpoint = services.push_endpoint_set(
        user=request.user,  # type: ignore[arg-type]
        organisation=payload.organisation,
        url=payload.url,
    )
    return {"organisation": endpoint.organisation.slug, "url": endpoint.url}
