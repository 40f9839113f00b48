"""Seat sheet benchmark: one block's labels as a PDF, the demo ground's biggest block.

Builds a fresh SQLite database of its own with the demo ground (venue file only), then times the
whole request in process (`/grounds/london-stadium/seat-codes/<block>.pdf` as the safety
officer: login check, 850 QR codes, the PDF) a few times, and prints the median, the wall time
and this process's CPU time. The load average is printed first: on a shared 2-core machine the
wall time follows the other load, the CPU time far less.

    .venv/bin/python bench/bench_seat_sheet.py            # or: make bench-seat-sheet
    .venv/bin/python bench/bench_seat_sheet.py --runs 5

Last line: `seat_sheet block=N-L1 seats=850 pages=41 median_s=X cpu_s=Y` (target: <= 5 s).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--block", default="")
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="safeground-bench-seats-")
    try:
        os.environ["DATABASE_URL"] = f"sqlite:///{workdir}/bench.sqlite3"
        os.environ["MEDIA_ROOT"] = workdir
        os.environ["DJANGO_SETTINGS_MODULE"] = "safeground.settings.dev"
        os.environ["SAFEGROUND_REQUIRE_2FA"] = "false"  # the login is forced, not typed
        import django

        django.setup()
        run(args.runs, args.block)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def run(runs: int, block_code: str) -> None:
    from django.core.management import call_command
    from django.test import Client

    from safeground.accounts.models import Membership, Organisation, Role, User
    from safeground.venues.models import Block
    from safeground.venues.services import venue_import

    call_command("migrate", verbosity=0)
    club = Organisation.objects.create(name="Home club", slug="home", kind="club")
    demo_ground = ROOT / "src" / "safeground" / "venues" / "demo" / "london-stadium.yaml"
    ground = venue_import(path=demo_ground, organisation=club)
    blocks = Block.objects.filter(ground=ground)
    block = blocks.get(code=block_code) if block_code else blocks.order_by("-capacity", "code")[0]
    officer = User.objects.create_user("safety", password="bench-only")
    Membership.objects.create(user=officer, organisation=club, role=Role.SAFETY_OFFICER)
    client = Client()
    client.force_login(officer)
    url = f"/grounds/{ground.code}/seat-codes/{block.code}.pdf"
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    walls, cpus = [], []
    for _ in range(runs):
        started, cpu = time.perf_counter(), time.process_time()
        response = client.get(url, SERVER_NAME="localhost")
        walls.append(time.perf_counter() - started)
        cpus.append(time.process_time() - cpu)
        assert response.status_code == 200, response.status_code
    import pypdfium2

    pages = len(pypdfium2.PdfDocument(response.content))
    seats = len(block.rows) * block.seats_per_row
    print("runs (wall s):", " ".join(f"{w:.2f}" for w in walls))
    print(
        f"seat_sheet block={block.code} seats={seats} pages={pages}"
        f" median_s={statistics.median(walls):.2f} cpu_s={statistics.median(cpus):.2f}"
    )


if __name__ == "__main__":
    main()
