import os
from typing import Any

import uvicorn
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from safeground.live.serving import uvicorn_options


class Command(BaseCommand):
    help = "Serve Safeground over ASGI (uvicorn) and print its address."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument(
            "--workers",
            type=int,
            default=int(os.environ.get("SAFEGROUND_WORKERS", "1")),
            help="server processes (default: SAFEGROUND_WORKERS or 1); more than one needs"
            " REDIS_URL, so each process's sockets get what the others publish",
        )

    def handle(self, *args: Any, host: str, port: int, workers: int, **options: Any) -> None:
        if workers < 1:
            raise CommandError("--workers: at least 1")
        if workers > 1 and not settings.REDIS_URL:
            raise CommandError(
                "--workers: more than one process needs REDIS_URL (live events cross processes"
                " through Redis; without it each process's sockets would miss the others')"
            )
        self.stdout.write(f"\nSafeground is at http://{host}:{port}/ ({workers} process(es))\n")
        self.stdout.write("Stop with Ctrl-C.\n")
        # permessage-deflate costs CPU and memory per socket for small frames (STACK.md).
        # Each worker is a process of its own: its own hub, Redis subscription and sockets.
        uvicorn.run(
            "safeground.asgi:application",
            host=host,
            port=port,
            workers=workers,
            ws_per_message_deflate=False,
            log_level="warning",
            **uvicorn_options(),  # header and keep-alive timeouts, a connection limit
        )
