"""The impairing proxy of bench/impair.py (issue 40): what it promises, measured through it
between real sockets on this machine."""

from __future__ import annotations

import socket
import socketserver
import threading
import time
from collections.abc import Iterator

import pytest
from bench.impair import PROFILES, ImpairingProxy, Profile


class _Upstream(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        self.received: list[tuple[float, bytes]] = []  # (when, bytes) as they arrived
        self.ended: list[str] = []  # how each connection ended: "eof" or "reset"
        super().__init__(("127.0.0.1", 0), _Echo)

    @property
    def port(self) -> int:
        return self.server_address[1]


class _Echo(socketserver.BaseRequestHandler):
    server: _Upstream

    def handle(self) -> None:
        try:
            while data := self.request.recv(65536):
                self.server.received.append((time.monotonic(), data))
                self.request.sendall(data)
            self.server.ended.append("eof")
        except ConnectionResetError:
            self.server.ended.append("reset")


@pytest.fixture
def upstream() -> Iterator[_Upstream]:
    server = _Upstream()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def _through(proxy: ImpairingProxy) -> socket.socket:
    return socket.create_connection(("127.0.0.1", proxy.ports[0]), timeout=5)


def _round_trip(client: socket.socket, message: bytes = b"ping") -> float:
    began = time.monotonic()
    client.sendall(message)
    got = b""
    while len(got) < len(message):
        got += client.recv(65536)
    assert got == message
    return time.monotonic() - began


def test_latency_is_the_round_trip_within_its_jitter(upstream: _Upstream) -> None:
    profile = Profile("test", rtt_ms=200, jitter_ms=80)
    with ImpairingProxy(profile, [(0, upstream.port)]) as proxy, _through(proxy) as client:
        trips = [_round_trip(client) for _ in range(15)]
    # Each way (200 ± 80) / 2 ms: the round trip between 120 and 280 ms, plus this box's share.
    assert min(trips) >= 0.12
    assert max(trips) <= 0.28 + 0.1
    assert max(trips) - min(trips) > 0.02, "the jitter varies the round trip"


def test_loopback_adds_nothing(upstream: _Upstream) -> None:
    with ImpairingProxy("loopback", [(0, upstream.port)]) as proxy, _through(proxy) as client:
        assert max(_round_trip(client) for _ in range(5)) < 0.05


def test_the_bandwidth_cap_holds(upstream: _Upstream) -> None:
    profile = Profile("test", kbit_s=800)  # 100,000 bytes a second each way
    with ImpairingProxy(profile, [(0, upstream.port)]) as proxy, _through(proxy) as client:
        began = time.monotonic()
        client.sendall(b"x" * 100_000)
        got = 0
        while got < 100_000:
            got += len(client.recv(65536))
        took = time.monotonic() - began
    first, last = upstream.received[0][0], upstream.received[-1][0]
    # Up at the cap (the first piece's own share aside), then back down alongside it.
    assert 0.95 <= last - first + 1460 / 100_000 <= 1.25
    assert 0.95 <= took <= 1.5


def test_a_stall_delivers_nothing_then_everything(upstream: _Upstream) -> None:
    with ImpairingProxy("loopback", [(0, upstream.port)]) as proxy, _through(proxy) as client:
        assert _round_trip(client) < 0.05
        proxy.stall(1.0)
        began = time.monotonic()
        for part in (b"a", b"b", b"c"):
            client.sendall(part)
            time.sleep(0.1)
        client.settimeout(0.5)
        with pytest.raises(TimeoutError):
            client.recv(100)
        assert len(upstream.received) == 1, "nothing reached the server during the stall"
        client.settimeout(2)
        got = b""
        while len(got) < 3:
            got += client.recv(100)
        assert got == b"abc"
        assert time.monotonic() - began >= 0.95
        assert upstream.received[-1][0] - upstream.received[1][0] < 0.1, "all at once"


def test_the_profile_stalls_on_its_schedule() -> None:
    crowded = PROFILES["crowded-4g"]
    assert [crowded.stall_end(t) for t in (29.9, 30.0, 34.9, 35.0, 61.0)] == [
        None,
        35.0,
        35.0,
        None,
        65.0,
    ]
    blackout = PROFILES["blackout"]
    assert blackout.stall_end(9.9) is None
    assert blackout.stall_end(10) == blackout.stall_end(69.9) == 70.0
    assert blackout.stall_end(70) is None and blackout.stall_end(100) is None
    assert PROFILES["ground-wifi"].stall_end(1000) is None


def test_a_scheduled_stall_holds_bytes_until_it_ends(upstream: _Upstream) -> None:
    profile = Profile("test", stall_first_s=0.5, stall_s=0.7)
    with ImpairingProxy(profile, [(0, upstream.port)]) as proxy, _through(proxy) as client:
        time.sleep(0.6 - (time.monotonic() - proxy.t0))
        took = _round_trip(client)
    assert 0.5 <= took <= 0.75


def test_a_reset_closes_both_sides(upstream: _Upstream) -> None:
    with ImpairingProxy("loopback", [(0, upstream.port)]) as proxy, _through(proxy) as client:
        _round_trip(client)
        proxy.reset_all()
        with pytest.raises(ConnectionResetError):
            client.recv(100)
        deadline = time.monotonic() + 2
        while not upstream.ended and time.monotonic() < deadline:
            time.sleep(0.01)
        assert upstream.ended == ["reset"]
        with _through(proxy) as again:  # the network is back for new connections
            assert _round_trip(again) < 0.05


def test_dropping_resets_on_its_schedule(upstream: _Upstream) -> None:
    profile = Profile("test", reset_every_s=0.5)
    with ImpairingProxy(profile, [(0, upstream.port)]) as proxy, _through(proxy) as client:
        _round_trip(client)
        client.settimeout(2)
        with pytest.raises(ConnectionResetError):
            client.recv(100)
        assert 0.45 <= time.monotonic() - proxy.t0 <= 0.8
        assert proxy.resets == 1


def test_a_half_open_connection_never_answers(upstream: _Upstream) -> None:
    with ImpairingProxy("loopback", [(0, upstream.port)]) as proxy:
        with _through(proxy) as before:
            _round_trip(before)
            proxy.half_open()
            with _through(proxy) as during:  # accepted, as a dead peer's kernel may still
                for client in (before, during):
                    client.sendall(b"anyone there?")
                    client.settimeout(1.0)
                    with pytest.raises(TimeoutError):  # no answer, and no close either
                        client.recv(100)
        assert [data for _, data in upstream.received] == [b"ping"]
        proxy.half_open(False)
        with _through(proxy) as after:
            assert _round_trip(after) < 0.05


def test_a_refused_upstream_refuses_the_client() -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        dead = free.getsockname()[1]
    with ImpairingProxy("loopback", [(0, dead)]) as proxy:
        try:
            with _through(proxy) as client:
                client.settimeout(2)
                ended = client.recv(100)
        except ConnectionResetError:
            ended = b""
    assert ended == b"", "closed at once, never left waiting"
