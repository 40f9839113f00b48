"""How an event travels between processes: Redis channels named for the database number, and,
without Redis, the relay (a Unix datagram socket named for the database) from a process that
serves no sockets to the server's hub (bus.py). The message is the audience and seq on one line,
then the frame exactly as sent."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import socket
import stat
import tempfile
import threading
from typing import TYPE_CHECKING

from .events import Event

if TYPE_CHECKING:
    import redis

logger = logging.getLogger(__name__)

RELAY_MAX_BYTES = 200_000  # within Linux's default datagram limit; a log frame is ~1 kB


def channel_prefix(redis_url: str) -> str:
    """`safeground:<db>:fixture:`. Redis pub/sub ignores the database number (a subscriber on
    any number hears every channel), so the number goes into the name: installations sharing
    one Redis server on different numbers never receive each other's frames."""
    from redis.connection import parse_url

    return f"safeground:{parse_url(redis_url).get('db', 0)}:fixture:"


def relay_path() -> str:
    """The relay's socket: named for the database, so that a command and the server it runs
    beside (the same database) meet, and two installations on one machine never do. It lives in
    a folder of this user's only (0700), so no other user can listen in or pose as the server."""
    from django.db import connections

    db = connections["default"].settings_dict
    folder, path = _relay_names(f"{db.get('HOST') or ''}:{db.get('PORT') or ''}/{db['NAME']}")
    # Checked at every send (one lstat): a folder removed meanwhile and made again by another
    # user must not receive the log's frames.
    with contextlib.suppress(FileExistsError):
        if not os.path.lexists(folder):
            os.mkdir(folder, 0o700)
    info = os.lstat(folder)
    if info.st_uid != os.getuid() or info.st_mode & 0o077 or not stat.S_ISDIR(info.st_mode):
        raise OSError(f"{folder} is not a private folder of this user: no live relay")
    return path


@functools.cache
def _relay_names(identity: str) -> tuple[str, str]:
    """The relay's folder and socket for a database (named once a process)."""
    digest = hashlib.sha256(identity.encode()).hexdigest()[:16]
    folder = os.path.join(tempfile.gettempdir(), f"safeground-{os.getuid()}")
    return folder, os.path.join(folder, f"live-{digest}.sock")


def relay_send(event: Event) -> None:
    header = json.dumps(
        {
            "fixture": event.fixture_id,
            "seq": event.seq,
            "chain_seq": event.chain_seq,
            **event.audience.to_wire(),
        }
    )
    data = (header + "\n" + event.frame).encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as relay:
        try:
            relay.sendto(data, relay_path())
        except (FileNotFoundError, ConnectionRefusedError):
            pass  # no server is running: its pages read the log when they open
        except OSError:
            logger.warning("live: event of fixture %s not relayed", event.fixture_id, exc_info=True)


def redis_message(event: Event) -> str:
    """Redis message: the audience and seq on one line, then the frame exactly as sent."""
    wire = {"seq": event.seq, "chain_seq": event.chain_seq, **event.audience.to_wire()}
    return json.dumps(wire) + "\n" + event.frame


_redis_clients: dict[str, redis.Redis] = {}
_clients_lock = threading.Lock()


def redis_client(url: str) -> redis.Redis:
    """The process's (blocking) client for this Redis."""
    with _clients_lock:
        client = _redis_clients.get(url)
        if client is None:
            import redis

            client = _redis_clients[url] = redis.Redis.from_url(url)
    return client
