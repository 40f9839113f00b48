"""Push alerts' API: a phone subscribing, its service worker's receipts, the steward page's
"seen", and a broadcast's delivery recipient by recipient."""

from typing import Any, Literal

from django.http import HttpRequest
from django.utils import translation
from django.utils.translation import gettext as _
from ninja import Field, Router, Status
from ninja.security import APIKeyHeader, django_auth

from safeground import clock
from safeground.accounts.models import User
from safeground.accounts.permissions import (
    can_acknowledge_broadcast,
    can_receive_alerts,
    can_view_deployment,
    require,
)
from safeground.errors import answers
from safeground.incidents.models import Broadcast
from safeground.matches.selectors import fixture_for
from safeground.request_body import Body

from . import services
from .selectors import broadcast_delivery

router = Router(tags=["alerts"], auth=django_auth)


class ReceiptToken(APIKeyHeader):
    """The token a push carried (services.receipt_token): the recipient's id, MAC'd."""

    param_name = "X-Alert-Token"

    def authenticate(self, request: HttpRequest, key: str | None) -> int | None:
        return services.receipt_recipient_id(key or "")


class KeysIn(Body):
    """The subscription's keys, base64url as the browser gives them: the P-256 public key (65
    bytes, uncompressed: 0x04 first) and the 16-byte authentication secret."""

    p256dh: str = Field(pattern=r"^B[A-Za-z0-9_-]{86}=?$")
    auth: str = Field(pattern=r"^[A-Za-z0-9_-]{22}(==)?$")


class SubscriptionIn(Body):
    """PushSubscription.toJSON() of the phone's browser, and what the phone is."""

    endpoint: str = Field(
        min_length=1, max_length=1000, pattern=r"^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[!-~]*)?$"
    )
    keys: KeysIn
    device: str = Field("", max_length=200)


class EndpointIn(Body):
    endpoint: str = Field(min_length=1, max_length=1000)


class ReceiptIn(Body):
    state: Literal["delivered", "acknowledged"]


def _user(request: HttpRequest) -> User:
    user = request.user
    assert isinstance(user, User)  # django_auth let only a logged-in person through
    return user


@router.post(
    "/alerts/subscriptions",
    response={201: dict[str, Any]},
    openapi_extra=answers(services.AlertError),
    url_name="alert_subscribe",
)
def alert_subscribe(request: HttpRequest, payload: SubscriptionIn) -> Status[Any]:
    require(can_receive_alerts(request.user))
    subscription = services.subscription_save(
        user=_user(request),
        endpoint=payload.endpoint,
        p256dh=payload.keys.p256dh,
        auth=payload.keys.auth,
        device=payload.device,
        language=translation.get_language() or "",  # the steward page's, which subscribes
    )
    return Status(201, {"id": subscription.pk})


@router.post(
    "/alerts/subscriptions/remove",
    response={200: dict[str, Any]},
    openapi_extra=answers(services.AlertError),
    url_name="alert_unsubscribe",
)
def alert_unsubscribe(request: HttpRequest, payload: EndpointIn) -> dict[str, Any]:
    removed = services.subscription_remove(user=_user(request), endpoint=payload.endpoint)
    return {"removed": removed}


@router.post(
    "/alerts/receipt",
    auth=ReceiptToken(),
    response={200: dict[str, Any]},
    openapi_extra=answers(services.AlertError),
    url_name="alert_receipt",
)
def alert_receipt(request: HttpRequest, payload: ReceiptIn) -> dict[str, Any]:
    """A phone's service worker: the push arrived, or its Acknowledge was tapped. The token is
    the credential (a locked phone's session may have ended); it reaches one recipient only."""
    recipient_id = request.auth  # type: ignore[attr-defined]
    services.receipt_record(recipient_id=recipient_id, state=payload.state)
    return {"state": payload.state}


def _broadcast(request: HttpRequest, fixture_id: int, broadcast_id: int) -> Broadcast:
    fixture = fixture_for(request.user, fixture_id)
    broadcast = Broadcast.objects.filter(fixture=fixture, pk=broadcast_id).first()
    if broadcast is None:
        raise services.AlertNotFound(
            "broadcast", _("no broadcast %(broadcast)s") % {"broadcast": broadcast_id}
        )
    return broadcast


@router.post(
    "/fixtures/{fixture_id}/broadcasts/{broadcast_id}/seen",
    response={200: dict[str, Any]},
    openapi_extra=answers(services.AlertError),
    url_name="broadcast_seen",
)
def broadcast_seen(request: HttpRequest, fixture_id: int, broadcast_id: int) -> dict[str, Any]:
    """The steward page showed the broadcast to its recipient."""
    broadcast = _broadcast(request, fixture_id, broadcast_id)
    require(can_acknowledge_broadcast(request.user, broadcast.fixture, broadcast.recipient_ids))
    return {"seen": services.seen_record(broadcast=broadcast, user=_user(request))}


@router.get(
    "/fixtures/{fixture_id}/broadcasts/{broadcast_id}/delivery",
    response={200: dict[str, Any]},
    openapi_extra=answers(services.AlertError),
    url_name="broadcast_delivery",
)
def broadcast_delivery_read(
    request: HttpRequest, fixture_id: int, broadcast_id: int
) -> dict[str, Any]:
    """Each recipient: sent, delivered to the phone, seen, acknowledged (ISO times or null)."""
    broadcast = _broadcast(request, fixture_id, broadcast_id)
    require(can_view_deployment(request.user, broadcast.fixture))
    delivery = broadcast_delivery(broadcast)
    return {
        "broadcast": broadcast.pk,
        "raised_at": clock.iso(delivery.raised_at) if delivery.raised_at else None,
        "counts": delivery.counts,
        "recipients": [row.to_json() for row in delivery.rows],
    }
