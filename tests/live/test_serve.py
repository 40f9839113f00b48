"""`safeground serve`: more than one process only with Redis between them."""

import pytest
from django.core.management import CommandError, call_command


def test_two_workers_without_redis_are_refused(settings) -> None:
    settings.REDIS_URL = ""
    with pytest.raises(CommandError, match="--workers: more than one process needs REDIS_URL"):
        call_command("serve", "--workers", "2")


def test_no_workers_is_refused() -> None:
    with pytest.raises(CommandError, match="--workers: at least 1"):
        call_command("serve", "--workers", "0")


def test_the_served_application_keeps_start_up_out_of_the_collectors_passes() -> None:
    # The live p99 depends on it (ADR 0002, Update 3): start-up's objects frozen, young passes
    # ten times rarer than Python's default.
    import gc

    from safeground import asgi

    assert gc.get_freeze_count() > 10_000
    assert gc.get_threshold() == asgi.GC_THRESHOLDS


def serving(settings, **limits):
    """uvicorn as `safeground serve` runs it, in a thread, on a small app; its address."""
    import threading
    import time

    import uvicorn

    from safeground.live.serving import uvicorn_options

    for name, value in limits.items():
        setattr(settings, name, value)

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        headers = [(b"content-length", b"2")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"ok"})

    config = uvicorn.Config(app, host="127.0.0.1", port=0, lifespan="off", log_level="warning",
                            **uvicorn_options())  # fmt: skip
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    return server, thread, port


def answer(sock) -> bytes:
    data = b""
    while not data.endswith(b"\r\n\r\nok"):
        chunk = sock.recv(1000)
        assert chunk, data
        data += chunk
    return data


def test_a_client_slow_to_send_its_headers_is_dropped_and_others_are_served(settings) -> None:
    import socket
    import time

    server, thread, port = serving(settings, SAFEGROUND_HEADER_TIMEOUT_SECONDS=0.5)
    try:
        slow = socket.create_connection(("127.0.0.1", port))
        slow.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
        slow.settimeout(5)
        began = time.monotonic()
        assert slow.recv(100) == b""  # closed by the server
        assert 0.3 < time.monotonic() - began < 2
        fast = socket.create_connection(("127.0.0.1", port))
        fast.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        fast.settimeout(5)
        assert answer(fast).startswith(b"HTTP/1.1 200")
        time.sleep(0.8)  # a whole request in time is not cut by the timer meanwhile
        fast.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert answer(fast).startswith(b"HTTP/1.1 200")
    finally:
        server.should_exit = True
        thread.join(timeout=5)


def test_serve_runs_uvicorn_with_the_limits(settings, monkeypatch) -> None:
    import uvicorn

    from safeground.live.serving import HeaderTimeoutProtocol

    settings.SAFEGROUND_MAX_CONNECTIONS = 123
    settings.SAFEGROUND_KEEP_ALIVE_SECONDS = 7
    ran: dict = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: ran.update(options))
    call_command("serve")
    assert ran["http"] is HeaderTimeoutProtocol
    assert (ran["limit_concurrency"], ran["timeout_keep_alive"]) == (123, 7)
