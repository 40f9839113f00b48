import base64
from io import BytesIO

import qrcode
import qrcode.image.svg
from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import mark_safe
from django.utils.translation import gettext, gettext_lazy
from django_otp import login as otp_login
from django_otp.plugins.otp_totp.models import TOTPDevice

from .permissions import device_organisation_ids, require
from .selectors import device_for, devices_for
from .services import device_revoke


class TokenForm(forms.Form):
    token = forms.CharField(
        label=gettext_lazy("Six-digit code from your authenticator app"),
        min_length=6,
        max_length=6,
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "inputmode": "numeric"}),
    )


def _qr_svg(uri: str) -> str:
    buffer = BytesIO()
    qrcode.make(uri, image_factory=qrcode.image.svg.SvgPathImage).save(buffer)
    return buffer.getvalue().decode()


@login_required
def second_factor(request: HttpRequest) -> HttpResponse:
    """Set up TOTP on first use, then ask for a code at every login."""
    user = request.user
    device = TOTPDevice.objects.filter(user=user, confirmed=True).first()
    setting_up = device is None
    if setting_up:
        device, _ = TOTPDevice.objects.get_or_create(
            user=user, confirmed=False, defaults={"name": "Authenticator app"}
        )
    assert device is not None
    form = TokenForm(request.POST or None)
    allowed, _ = device.verify_is_allowed()  # django-otp slows down repeated wrong codes
    if request.method == "POST" and form.is_valid() and not allowed:
        form.add_error(
            "token", gettext("Too many wrong codes in a row: wait a few seconds, then try.")
        )
    elif request.method == "POST" and form.is_valid():
        if device.verify_token(form.cleaned_data["token"]):
            if setting_up:
                device.confirmed = True
                device.save(update_fields=["confirmed"])
            otp_login(request, device)
            next_url = request.GET.get("next", "")
            if not url_has_allowed_host_and_scheme(next_url, {request.get_host()}):
                next_url = "/"
            return redirect(next_url)
        form.add_error(
            "token", gettext("That code is not right or has expired. Try the current one.")
        )
    context = {"form": form, "setting_up": setting_up}
    if setting_up:
        context["qr_svg"] = mark_safe(_qr_svg(device.config_url))
        context["secret"] = base64.b32encode(device.bin_key).decode()
    return render(request, "accounts/second_factor.html", context)


@login_required
def devices(request: HttpRequest) -> HttpResponse:
    """The organisation's turnstiles and scanners, each with a button to revoke its key."""
    require(bool(device_organisation_ids(request.user)))
    return render(
        request,
        "accounts/devices.html",
        {"devices": devices_for(request.user), "cache_seconds": _cache_seconds()},
    )


@login_required
def device_revoke_page(request: HttpRequest, device_id: int) -> HttpResponse:
    """Asks first (GET), then revokes (POST): the device stops scanning for good."""
    device = device_for(request.user, device_id)
    if request.method == "POST":
        if device.revoked_at is None:
            device = device_revoke(device=device, by=request.user)  # type: ignore[arg-type]
            messages.success(
                request,
                gettext("Revoked %(name)s: its key no longer works.") % {"name": device.name},
            )
        else:
            messages.info(request, gettext("%(name)s was already revoked.") % {"name": device.name})
        return redirect("devices")
    return render(
        request,
        "accounts/device_revoke.html",
        {"device": device, "cache_seconds": _cache_seconds()},
    )


def _cache_seconds() -> str:
    return f"{settings.SAFEGROUND_ENTRY_CACHE_SECONDS:g}"
