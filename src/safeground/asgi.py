"""The ASGI application uvicorn serves: Django over HTTP (static files too, in development) and
the live sockets of fixtures (`/ws/fixtures/<id>/`, safeground.live.websocket)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "safeground.settings.dev")

django_app = get_asgi_application()


def build_application():
    from django.conf import settings

    if settings.DEBUG or not settings.STORAGES["staticfiles"]["BACKEND"].startswith("whitenoise"):
        from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

        return ASGIStaticFilesHandler(django_app)
    return django_app


from safeground.entry.asgi import gates_router  # noqa: E402  (needs Django set up)
from safeground.live.websocket import live_router  # noqa: E402

# Turnstile scans and live sockets take lean routes of their own; everything else is Django.
application = gates_router(live_router(build_application()))
