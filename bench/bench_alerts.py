"""Push alerts benchmark (issue 29): an urgent broadcast to N subscribed stewards (default 500)
through a push service on this machine (bench/push_receiver.py: it checks each message's VAPID
token and decrypts it with its phone's keys), with N steward sockets open on the match.

A real server (`safeground serve`, one process) over a fresh database of its own with the demo
loaded; N steward users made inside it, each posted to the cup tie, each with a session (its
socket's) and a push subscription at the receiver. The demo loggist POSTs one urgent broadcast;
the server pushes to every phone from its push threads; each phone, on its message, does what
the steward page's service worker does (alerts/push-sw-1.js): reports it delivered with the
token it carried (16 phones' reports at a time). Measured, from just before the POST: the time
to each phone's "delivered" answered by the server (the issue's measure: p99 ≤ 2 s), the time
to each socket's broadcast frame, and the POST's own answer (a broadcast to 500 must not hold
it). Then every phone acknowledges from its notification, and the server's own per-recipient
record (GET .../delivery) is read back. Last line:

    alerts recipients=N delivered=D p99_ms=X acked=A

    .venv/bin/python bench/bench_alerts.py                # SQLite, 500 stewards
    .venv/bin/python bench/bench_alerts.py --stewards 50  # a quick look
    .venv/bin/python bench/bench_alerts.py --postgres --pg-db sg_me_bench_alerts
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import multiprocessing
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import bench_live
from bench.push_receiver import Message, PushReceiver

REPORTERS = 16  # phones reporting at once (each a keep-alive connection)
WAIT_S = 30.0


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stewards", type=int, default=500)
    parser.add_argument("--postgres", action="store_true", help="serve from PostgreSQL")
    parser.add_argument("--pg-db", default=os.environ.get("BENCH_ALERTS_PG_DB", "sg_bench_alerts"))
    return parser.parse_args()


# --- inside Django: the stewards, their sessions, posts and subscriptions ---------------------


def setup_main(phones_file: str) -> None:
    """Steward users posted to the cup tie, each with a session and a push subscription (one
    per line of `phones_file`); prints their session keys, the fixture and the server's VAPID
    key as JSON."""
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore
    from django.contrib.sessions.models import Session

    from safeground.accounts.models import Membership, Role, User
    from safeground.alerts import vapid
    from safeground.alerts.models import PushSubscription
    from safeground.incidents.models import StewardPost

    subscriptions = [json.loads(line) for line in Path(phones_file).read_text().splitlines()]
    fixture = bench_live.bench_fixture()
    zones = list(fixture.zones.order_by("zone_id").values_list("zone_id", flat=True))
    home = fixture.ground.organisation_id
    made = User.objects.bulk_create(
        User(username=f"alert-{i}", password="!bench", first_name="Bench", last_name=f"Steward {i}")
        for i in range(len(subscriptions))
    )
    Membership.objects.bulk_create(
        Membership(user=user, organisation_id=home, role=Role.STEWARD) for user in made
    )
    StewardPost.objects.bulk_create(
        StewardPost(fixture=fixture, steward=user, zone_id=zones[i % len(zones)])
        for i, user in enumerate(made)
    )
    PushSubscription.objects.bulk_create(
        PushSubscription(
            user=user,
            endpoint=sub["endpoint"],
            p256dh=sub["keys"]["p256dh"],
            auth=sub["keys"]["auth"],
            device="bench phone",
        )
        for user, sub in zip(made, subscriptions, strict=True)
    )
    backend = settings.AUTHENTICATION_BACKENDS[-1]
    sessions, keys = [], []
    for user in made:
        store = SessionStore()
        key = store._get_new_session_key()
        data = {
            SESSION_KEY: str(user.pk),
            BACKEND_SESSION_KEY: backend,
            HASH_SESSION_KEY: user.get_session_auth_hash(),
        }
        sessions.append(
            Session(
                session_key=key,
                session_data=store.encode(data),
                expire_date=store.get_expiry_date(),
            )
        )
        keys.append(key)
    Session.objects.bulk_create(sessions)
    print(json.dumps({"sessions": keys, "fixture": fixture.pk, "vapid": vapid.public_key()}))


# --- the stewards' sockets, in a process of their own -----------------------------------------


def sockets_process(url: str, origin: str, keys: list[str], pipe: Connection) -> None:
    bench_live.raise_fd_limit()
    asyncio.run(_sockets(url, origin, keys, pipe))


async def _sockets(url: str, origin: str, keys: list[str], pipe: Connection) -> None:
    from websockets.asyncio.client import connect

    got: list[float] = []
    gate = asyncio.Semaphore(50)

    async def open_one(key: str) -> Any:
        async with gate:
            for _attempt in range(5):
                try:
                    ws = await connect(
                        url,
                        origin=origin,  # type: ignore[arg-type]
                        additional_headers={"Cookie": f"sessionid={key}"},
                        compression=None,
                        ping_interval=None,
                        open_timeout=60,
                        max_queue=None,
                    )
                    await ws.recv()  # hello
                    return ws
                except Exception:
                    await asyncio.sleep(0.5)
            return None

    async def listen(ws: Any) -> None:
        try:
            async for message in ws:
                if '"type":"broadcast"' in message:
                    got.append(time.monotonic())
                    return
        except Exception:
            pass

    sockets = [ws for ws in await asyncio.gather(*(open_one(k) for k in keys)) if ws]
    listeners = [asyncio.create_task(listen(ws)) for ws in sockets]
    pipe.send(len(sockets))
    await asyncio.get_running_loop().run_in_executor(None, pipe.recv)  # "stop"
    for ws in sockets:
        ws.transport.abort()
    await asyncio.gather(*listeners, return_exceptions=True)
    pipe.send(got)


# --- the phones: each reports its push as the service worker would ----------------------------


class Phones:
    """On each message the receiver decrypted: a report "delivered" with the message's token,
    from REPORTERS threads (keep-alive connections), each answer's time kept."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.work: queue.Queue[tuple[Message, str] | None] = queue.Queue()
        self.delivered: list[float] = []
        self.acked = 0
        self.refused: list[int] = []
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._run, daemon=True) for _ in range(REPORTERS)]
        for thread in self.threads:
            thread.start()

    def on_message(self, message: Message) -> None:
        self.work.put((message, "delivered"))

    def acknowledge(self, messages: list[Message]) -> None:
        for message in messages:
            self.work.put((message, "acknowledged"))

    def _run(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        while (item := self.work.get()) is not None:
            message, state = item
            data = message.json()
            body = json.dumps({"state": state})
            headers = {"Content-Type": "application/json", "X-Alert-Token": data["token"]}
            try:
                conn.request("POST", data["receipt"], body=body, headers=headers)
                response = conn.getresponse()
                response.read()
                status = response.status
            except (OSError, http.client.HTTPException):
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                status = 0
            with self.lock:
                if status != 200:
                    self.refused.append(status)
                elif state == "delivered":
                    self.delivered.append(time.monotonic())
                else:
                    self.acked += 1
            self.work.task_done()

    def stop(self) -> None:
        for _ in self.threads:
            self.work.put(None)


def p99_ms(values: list[float]) -> int:
    if not values:
        return -1
    ordered = sorted(values)
    return round(1000 * ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))])


def run(args: argparse.Namespace, database: bench_live.Database, workdir: Path) -> dict[str, Any]:
    receiver = PushReceiver()
    phones_file = workdir / "phones.jsonl"
    made = [receiver.phone() for _ in range(args.stewards)]
    phones_file.write_text("\n".join(json.dumps(p.subscription()) for p in made))
    env = bench_live.server_env(database)
    env.update({"SAFEGROUND_PUSH_HOSTS": "127.0.0.1", "SAFEGROUND_DEMO_TICKETS": "sample",
                "SAFEGROUND_DEMO_HISTORY": "false", "LOG_LEVEL": "ERROR"})  # fmt: skip
    for command in (["migrate", "--no-input", "-v", "0"], ["demo"]):
        subprocess.run(
            [bench_live.PYTHON, "-m", "safeground.cli", *command],
            env=env,
            cwd=bench_live.ROOT,
            check=True,
            stdout=subprocess.DEVNULL,
        )
    done = subprocess.run(
        [bench_live.PYTHON, __file__, "setup", str(phones_file)],
        env=env,
        cwd=bench_live.ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    setup = json.loads(done.stdout.strip().splitlines()[-1])
    receiver.server_key = setup["vapid"]  # every token must carry the server's own key
    port = bench_live.free_port()
    server = subprocess.Popen(
        [bench_live.PYTHON, "-m", "safeground.cli", "serve", f"--port={port}", "--workers=1"],
        env=env, cwd=bench_live.ROOT, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    phones = Phones(port)
    receiver.on_message = phones.on_message
    try:
        bench_live.wait_for_port(port, server)
        parent, child = multiprocessing.Pipe()
        url = f"ws://127.0.0.1:{port}/ws/fixtures/{setup['fixture']}/"
        sockets = multiprocessing.Process(
            target=sockets_process, args=(url, f"http://127.0.0.1:{port}", setup["sessions"], child)
        )
        sockets.start()
        opened = parent.recv()
        loggist = bench_live.ApiPublisher(port)
        time.sleep(1.0)  # the sockets' joins settle
        load = os.getloadavg()[0]
        body = json.dumps(
            {"script": "evacuate", "text": "Evacuate block S-L3 via the south vomitory"}
        )
        headers = {"Content-Type": "application/json", "X-CSRFToken": loggist.cookies["csrftoken"]}
        t0 = time.monotonic()
        status, answer = loggist._request(
            "POST", f"/api/fixtures/{setup['fixture']}/broadcasts", body.encode(), **headers
        )
        post_s = time.monotonic() - t0
        if status != 201:
            raise RuntimeError(f"the broadcast was refused: {status} {answer[:300]!r}")
        broadcast = json.loads(answer)["id"]
        deadline = time.monotonic() + WAIT_S
        while (
            len(phones.delivered) + len(phones.refused) < args.stewards
            and time.monotonic() < deadline
        ):
            time.sleep(0.05)
        delivered = [at - t0 for at in phones.delivered]
        phones.acknowledge(receiver.messages)
        phones.work.join()
        parent.send("stop")
        frames = [at - t0 for at in parent.recv()]
        sockets.join(timeout=30)
        _status, data = loggist._request(
            "GET", f"/api/fixtures/{setup['fixture']}/broadcasts/{broadcast}/delivery"
        )
        record = json.loads(data)
    finally:
        phones.stop()
        bench_live.stop_server(server)
        receiver.close()
    return {
        "opened": opened, "load": load, "post_ms": round(post_s * 1000), "delivered": delivered,
        "frames": frames, "record": record, "pushes": len(receiver.messages),
        "refused": receiver.refused, "reports_refused": phones.refused,
        "pushed": [m.received_at - t0 for m in receiver.messages],
    }  # fmt: skip


def main() -> None:
    args = parse_args()
    bench_live.raise_fd_limit()
    workdir = Path(tempfile.mkdtemp(prefix="safeground-bench-alerts-"))
    try:
        database = bench_live.postgres_database(args.pg_db) if args.postgres else None
        database = database or bench_live.sqlite_database(workdir)
        print(f"alerts: {args.stewards} stewards, one server process on {database.name};"
              f" load average {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
        result = run(args, database, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    counts = result["record"]["counts"]
    print(f"  sockets open {result['opened']}; the broadcast POST answered in"
          f" {result['post_ms']} ms; pushes decrypted {result['pushes']}, refused by the push"
          f" service {len(result['refused'])} {result['refused'][:2]}; phones' reports refused"
          f" {len(result['reports_refused'])}")  # fmt: skip
    print(f"  to delivered (phone's report answered): p50_ms={p99_ms_at(result['delivered'], 0.5)}"
          f" p99_ms={p99_ms(result['delivered'])} max_ms={p99_ms_at(result['delivered'], 1.0)};"
          f" to the socket frame: p50_ms={p99_ms_at(result['frames'], 0.5)}"
          f" p99_ms={p99_ms(result['frames'])} ({len(result['frames'])} sockets)")  # fmt: skip
    print(
        f"  to the push service (the receiver decrypted it):"
        f" p50_ms={p99_ms_at(result['pushed'], 0.5)} p99_ms={p99_ms(result['pushed'])}"
    )
    print(f"  the server's record: {counts}; load average before {result['load']:.1f}")
    print(f"alerts recipients={len(result['record']['recipients'])}"
          f" delivered={counts['delivered']} p99_ms={p99_ms(result['delivered'])}"
          f" acked={counts['acknowledged']}")  # fmt: skip


def p99_ms_at(values: list[float], share: float) -> int:
    if not values:
        return -1
    ordered = sorted(values)
    return round(1000 * ordered[min(len(ordered) - 1, int(len(ordered) * share))])


if __name__ == "__main__":
    if sys.argv[1:2] == ["setup"]:
        setup_main(sys.argv[2])
    else:
        main()
