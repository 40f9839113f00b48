from django.conf import settings
from django.http import HttpRequest


def safeground(request: HttpRequest) -> dict[str, object]:
    return {
        "demo_mode": settings.SAFEGROUND_DEMO,
        "second_factor_off": not settings.SAFEGROUND_REQUIRE_2FA,
        # The language switch names each language in itself (settings.LANGUAGES, untranslated).
        "language_choices": settings.LANGUAGES,
        # A club in the league: the register's pages link the exchange's record (/league/).
        "league_exchange": bool(settings.SAFEGROUND_EXCHANGE_URL),
        # Pages' scripts read the CSRF token from its cookie (static/safeground/api-1.js).
        "csrf_cookie_name": settings.CSRF_COOKIE_NAME,
    }
