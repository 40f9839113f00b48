"""The ASGI application uvicorn serves: Django over HTTP (static files too, in development) and
the live sockets of fixtures (`/ws/fixtures/<id>/`, safeground.live.websocket).

Django's HTTP requests run through its WSGI handler on a fixed pool of threads (a2wsgi), not
its ASGI handler. Our views are sync; under the ASGI handler each request crossed between a new
thread and the event loop about fifteen times (once per middleware, each way), and every
crossing waited its turn on the loop behind the live fan-out: with 2,000 live sockets a log
entry's POST took 535 ms at p50 instead of 50 ms. Here a request enters its thread once, runs
the whole middleware chain and view there, and comes back once (docs/adr/0002-live-fan-out.md,
Update 3).
"""

import gc
import logging
import os
import time

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "safeground.settings.dev")

# Threads per process for Django's HTTP requests: each holds a database connection only while it
# serves a request, so this stays within the connection pool (settings.base, max 16).
HTTP_THREADS = max(1, int(os.environ.get("SAFEGROUND_HTTP_THREADS", "8")))

wsgi_app = get_wsgi_application()
logger = logging.getLogger(__name__)


def stamp_arrival(app):
    """Notes when each HTTP request arrived, so one that queued too long for a thread is shed
    (safeground.errors.RequestChecks, SAFEGROUND_QUEUE_WAIT_SECONDS)."""
    from safeground.errors import ARRIVED

    async def stamped(scope, receive, send):
        if scope["type"] == "http":
            scope.setdefault(ARRIVED, time.monotonic())  # served: the protocol stamped it
        await app(scope, receive, send)

    return stamped


def build_application():
    from a2wsgi import WSGIMiddleware
    from django.conf import settings

    django_app = stamp_arrival(WSGIMiddleware(wsgi_app, workers=HTTP_THREADS))  # type: ignore[arg-type]
    if settings.DEBUG or not settings.STORAGES["staticfiles"]["BACKEND"].startswith("whitenoise"):
        from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

        return ASGIStaticFilesHandler(django_app)
    return django_app


from safeground.alerts.receipts import receipts_router  # noqa: E402
from safeground.entry.runtime.asgi import Receive, Scope, Send, gates_router  # noqa: E402  (needs Django)
from safeground.live.websocket import live_router  # noqa: E402

# Turnstile scans, live sockets and phones' push receipts take lean routes of their own;
# everything else is Django.
routed = gates_router(live_router(receipts_router(build_application())))


def urls_ready() -> None:
    """The URLconf imported, and its patterns compiled for each language, before the process
    serves. Left to a fresh process's first request, this took 0.4-0.5 s of imports and regular
    expressions holding the GIL (measured on a busy machine), and stopped the scans decided on
    the loop and the live frames for as long, after every restart. Done here, at import, the
    objects it makes are frozen with the rest of start-up (below)."""
    from django.conf import settings
    from django.urls import reverse
    from django.utils import translation

    for code, _name in settings.LANGUAGES:
        with translation.override(code):
            reverse("login")  # the first reverse in a language compiles every pattern


urls_ready()

# The garbage collector's passes stop the whole process, live frames and requests alike: with
# 2,000 sockets a full pass took 100-220 ms and a young one 10-24 ms. What start-up made lives as
# long as the process, so it leaves the passes (freeze), and young passes come after 20,000 new
# objects instead of 2,000. Through Redis with 2,000 sockets, p99 342 -> 219 ms (medians of 5 and
# 3 runs, docs/adr/0002-live-fan-out.md, Update 3).
GC_THRESHOLDS = (20_000, 20, 20)
gc.freeze()
gc.set_threshold(*GC_THRESHOLDS)


async def application(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
    else:
        await routed(scope, receive, send)


def cap_key_ready() -> None:
    """The partners' CAP signing key loaded (or made) before the process serves, not at its first
    alert (partners.signing.key_ready): on the loop, which serves nothing yet. A key that cannot
    be read or made never stops a start: the alerts that need it fail and say so, as they did."""
    from safeground.partners.signing import key_ready

    try:
        key_ready()
    except (OSError, ValueError) as error:
        logger.warning("the CAP signing key was not loaded: %s", error)


async def lifespan(receive: Receive, send: Send) -> None:
    """A worker starting warms the scans' caches and pools first (entry.runtime.warm) and loads
    the partners' signing key (cap_key_ready), then puts the periodic jobs (the log's anchoring)
    on the one scheduler, when no `safeground worker` does (SAFEGROUND_PERIODIC_TASKS_IN_SERVER).
    Shutting down, it stops them and closes the database connections it holds open (the scans'
    async pool, the scan threads' own, Django's pool), so PostgreSQL sees them go at once, and
    its live relay (no Redis)."""
    from django.db import connections

    from safeground.entry.runtime.loop import scan_pool_close
    from safeground.entry.runtime.threads import scan_threads_close
    from safeground.entry.runtime.warm import warm_up
    from safeground.live.bus import relays_close
    from safeground.live.schedule import scheduled_jobs_start

    periodic_stop = None
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await warm_up()  # before uvicorn listens: a restart under load starts warm
            cap_key_ready()
            periodic_stop = scheduled_jobs_start(worker=False)  # as `safeground worker` does
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            if periodic_stop is not None:
                periodic_stop()  # a run under way ends first (a second or so)
            relays_close()
            await scan_pool_close()
            await scan_threads_close()
            for connection in connections.all(initialized_only=True):
                if hasattr(connection, "close_pool"):
                    connection.close_pool()
            await send({"type": "lifespan.shutdown.complete"})
            return
