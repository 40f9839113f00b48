"""The scanner page: a phone or tablet at a turnstile, paired with a device key (no user login),
that keeps deciding from a signed bundle when the network drops (docs/adr/0006-offline-scanners.md).
And the ban officer's pages for flagged tickets (their register record behind a stated reason).
"""

import hashlib
import json

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.staticfiles import finders
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.urls import reverse
from django.utils.cache import patch_cache_control
from django.utils.translation import gettext as _

from safeground.accounts.models import User
from safeground.accounts.permissions import flag_organisation_ids, require
from safeground.bans.services import BanError
from safeground.bans.views import reason_gate

from . import rules, selectors, services
from .forms import FlagDecisionForm
from .scanner_words import scanner_words

# Bump when the service worker's own logic changes; a change to any asset renews its cache anyway.
SCANNER_SW_VERSION = 2
# The files the page needs offline: base.html's and its own.
SCANNER_ASSETS = [
    "safeground/safeground-1.css",
    "safeground/favicon-1.svg",
    "vendor/htmx-2.0.11.min.js",
    "safeground/htmx-requests-1.js",
    "safeground/tables-1.js",
    "safeground/scanner-1.css",
    "safeground/scanner-1.js",
    "safeground/api-1.js",
    CAMERA_MODULE := "safeground/scanner-camera-1.js",
    # The camera's reader where the browser has none. The page hands its URL to the camera
    # module: with hashed static names (production), the module then imports the very file this
    # worker keeps.
    ZXING := "vendor/zxing-library-0.23.0.min.js",
]


def _static_url(name: str) -> str:
    url = static(name)
    return url if url.startswith("/") else f"/{url}"


def scanner_page(request: HttpRequest) -> HttpResponse:
    """No login: everything it shows comes from the API under the device key the steward pairs
    it with, and that key never leaves the device's storage except in its own requests."""
    config = {
        "scanUrl": reverse("api:entry_scan"),
        "timeZone": settings.TIME_ZONE,  # the times it shows are the ground's
        "bundleUrl": reverse("api:entry_bundle"),
        "bundleKeyUrl": reverse("api:entry_bundle_key"),
        "uploadUrl": reverse("api:entry_offline_scans"),
        "serviceWorker": reverse("entry_scanner_sw"),
        "scope": reverse("entry_scanner"),
        "cameraModule": _static_url(CAMERA_MODULE),
        "zxing": _static_url(ZXING),
        # The reasons, their order and the steward's words the page decides with offline.
        "rules": rules.for_scanner(),
        "words": scanner_words(),
    }
    return render(request, "entry/scanner.html", {"config": config})


def _assets_digest(names: list[str]) -> str:
    digest = hashlib.sha256(str(SCANNER_SW_VERSION).encode())
    for name in names:
        found = finders.find(name)
        if isinstance(found, str):
            with open(found, "rb") as source:
                digest.update(source.read())
    return digest.hexdigest()[:12]


def scanner_service_worker(request: HttpRequest) -> HttpResponse:
    """Keeps the page and its files so the page opens with no network (its scope is the page's
    folder). The API is never cached: offline decisions come from the bundle in IndexedDB."""
    names = SCANNER_ASSETS
    context = {
        "cache_prefix": json.dumps("safeground-scanner-"),
        "cache_name": json.dumps(
            f"safeground-scanner-v{SCANNER_SW_VERSION}-{_assets_digest(names)}"
        ),
        "page_url": json.dumps(reverse("entry_scanner")),
        "assets": json.dumps([_static_url(name) for name in names]),
        "static_url": json.dumps(settings.STATIC_URL),
    }
    response = render(
        request,
        "entry/scanner_sw.js",
        context,
        content_type="application/javascript; charset=utf-8",
    )
    # The browser checks for a new worker on each visit; never let a cache answer for it.
    patch_cache_control(response, no_cache=True, private=True)
    return response


def _user(request: HttpRequest) -> User:
    assert isinstance(request.user, User)
    return request.user


@login_required
def flags(request: HttpRequest) -> HttpResponse:
    """Flagged tickets awaiting review: the ticket's side only (no one's register record), and
    the holders' names only after a stated reason, each showing recorded."""
    require(bool(flag_organisation_ids(request.user)))

    def show(reason: str) -> HttpResponse:
        found = selectors.flags_list(user=request.user, reason=reason)
        return render(request, "entry/flags.html", {"flags": found, "reason": reason})

    return reason_gate(request, "flags", _("Flagged tickets"), show)


@login_required
def flag(request: HttpRequest, flag_id: int) -> HttpResponse:
    summary = selectors.flag_summary(request.user, flag_id)

    def show(reason: str) -> HttpResponse:
        found = selectors.flag_review(user=request.user, flag_id=summary.pk, reason=reason)
        return render(
            request,
            "entry/flag.html",
            {"flag": found, "form": FlagDecisionForm(), "reason": reason},
        )

    heading = _("Flagged ticket #%(flag)s") % {"flag": summary.pk}
    return reason_gate(request, f"flag:{summary.pk}", heading, show)


@login_required
def flag_decide(request: HttpRequest, flag_id: int) -> HttpResponse:
    found = selectors.flag_summary(request.user, flag_id)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    form = FlagDecisionForm(request.POST)
    if form.is_valid():
        decide_flag = (
            services.flag_confirm
            if form.cleaned_data["decision"] == "confirm"
            else services.flag_clear
        )
        try:
            decide_flag(flag=found, by=_user(request), note=form.cleaned_data["note"])
        except BanError as error:
            messages.error(request, f"{error.field}: {error.message}")
            return redirect("flag", found.pk)
        confirmed = form.cleaned_data["decision"] == "confirm"
        done = _("Flag #%(flag)s: confirmed.") if confirmed else _("Flag #%(flag)s: cleared.")
        messages.success(request, done % {"flag": found.pk})
        return redirect("flags")
    for field, errors in form.errors.items():
        messages.error(request, f"{field}: {' '.join(str(e) for e in errors)}")
    return redirect("flag", found.pk)
