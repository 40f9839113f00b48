"""A process warms up before it takes requests (safeground.asgi, at the lifespan's startup;
uvicorn listens only after it): the lookups' caches for the matches whose gates are open, a scan
thread's Django connection (and with it Django's pool), and on PostgreSQL the scans' own pool
connected. A process restarted under a full load of scans then decides them on the loop from
its first one, instead of sending each to the scan threads to load the same rows at once and
queueing every scan behind them (bench/bench_faults.py, the restart's first 5 s).

Warming is bounded (WARM_SECONDS) and never stops a start: with the database away the process
starts cold and answers 503 until it returns, as before.
"""

import asyncio
import logging
import time
from datetime import datetime

from . import lookups, loop
from .threads import in_scan_thread

logger = logging.getLogger(__name__)

WARM_SECONDS = 5.0


async def warm_up(seconds: float = WARM_SECONDS, *, now: datetime | None = None) -> None:
    began = time.monotonic()
    try:
        async with asyncio.timeout(seconds):
            loaded = await in_scan_thread(lookups.caches_warm, now)
            if loop.on_loop():
                await loop.scan_pool_ready()
    except (TimeoutError, *loop.DATABASE_DOWN) as error:
        logger.warning("started cold (the database did not answer the warm-up): %s", error)
        return
    logger.info("warm in %.2f s: %d cache entries", time.monotonic() - began, loaded)
