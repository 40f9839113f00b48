from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import urlencode

from safeground.errors import error_body

from .permissions import needs_second_factor

EXEMPT_PREFIXES = ("/account/2fa/", "/logout/", "/static/", "/i18n/")


class SecondFactorRequired:
    """Holds a privileged user at the TOTP step until they have passed it this session."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = request.user
        if (
            settings.SAFEGROUND_REQUIRE_2FA
            and user.is_authenticated
            and not user.is_verified()  # type: ignore[attr-defined]  # added by django-otp
            and not request.path.startswith(EXEMPT_PREFIXES)
            and needs_second_factor(user)
        ):
            if request.path.startswith("/api/"):
                detail = "Log in with your second factor."
                return JsonResponse(error_body("second_factor_required", "", detail), status=403)
            return redirect(f"{reverse('second_factor')}?{urlencode({'next': request.path})}")
        return self.get_response(request)
