"""Production: secrets and hosts must come from the environment; static files via whitenoise."""

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import MIDDLEWARE, STORAGES, env

DEBUG = False
SECRET_KEY = env.str("SECRET_KEY")
# Scanners hold bundles signed with it for hours: a key of its own, kept apart from SECRET_KEY.
SAFEGROUND_BUNDLE_SIGNING_KEY = env.str("SAFEGROUND_BUNDLE_SIGNING_KEY")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS")
# Stewards' phones subscribe to push alerts under this key. Derived from SECRET_KEY (as the laptop
# demo and the tests do), rotating SECRET_KEY would silently unsubscribe every phone: a
# deployment names its own, or does not start.
SAFEGROUND_VAPID_PRIVATE_KEY = env.str("SAFEGROUND_VAPID_PRIVATE_KEY", default="")
if not SAFEGROUND_VAPID_PRIVATE_KEY:
    raise ImproperlyConfigured(
        "SAFEGROUND_VAPID_PRIVATE_KEY is not set: push alerts to stewards' phones need the"
        " server's own VAPID key. `safeground vapidkey` prints a new one; keep it as you keep"
        " SECRET_KEY (changing it later unsubscribes every phone)."
    )
STORAGES = {
    **STORAGES,  # the media and evidence storages as base sets them
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
SESSION_COOKIE_SECURE = env.bool("SECURE_COOKIES", default=True)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
# HTTPS only: browsers remember it for a year (HSTS); plain HTTP is redirected. Behind a proxy that
# already redirects, SECURE_SSL_REDIRECT=false; the health check of a load balancer may need
# SECURE_REDIRECT_EXEMPT. HSTS_SECONDS=0 turns HSTS off while a deployment is being set up.
SECURE_HSTS_SECONDS = env.int("HSTS_SECONDS", default=31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("HSTS_INCLUDE_SUBDOMAINS", default=False)
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
SESSION_COOKIE_HTTPONLY = True
# Submitting a domain to the browsers' HSTS preload list is the deployer's decision, not a setting.
SILENCED_SYSTEM_CHECKS = ["security.W021"]
# whitenoise serves the collected static files right after the security middleware.
MIDDLEWARE = [MIDDLEWARE[0], "whitenoise.middleware.WhiteNoiseMiddleware", *MIDDLEWARE[1:]]
