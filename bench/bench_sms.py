"""The text line's reading (issue 37): the corpus of texts written the way fans write them
(tests/supporters/sms_corpus.csv) read at the demo ground, scored against what a person reads in
each. Measured: categories right, places right (block, row and seat all right, or rightly none),
and how many texts the line would ask for their place. No server, no database: the ground's plan
is read from its venue file, as the corpus test does. Last line:

    sms messages=N category_ok=X% place_ok=Y% asked_back=Z

    .venv/bin/python bench/bench_sms.py             # (or: make bench-sms)
    .venv/bin/python bench/bench_sms.py --wrong     # and each text read wrong
"""

import argparse
import csv
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "safeground.settings.test")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wrong", action="store_true", help="print each text read wrong")
    args = parser.parse_args()

    import django

    django.setup()
    from safeground.supporters.reading import GroundPlan, message_read
    from safeground.venues.venue_file import venue_file_read

    plan = GroundPlan.of_venue(
        venue_file_read(path=ROOT / "src/safeground/venues/demo/london-stadium.yaml")
    )
    with (ROOT / "tests/supporters/sms_corpus.csv").open(newline="") as file:
        cases = list(csv.DictReader(file))
    category_ok = place_ok = asked = 0
    began = time.perf_counter()
    for case in cases:
        read = message_read(case["message"], plan)
        place = (read.block if read.known else "", read.row, read.seat)
        want = (case["block"], case["row"], case["seat"])
        category_ok += read.category == case["category"]
        place_ok += place == want
        asked += not read.known
        if args.wrong and (read.category, place) != (case["category"], want):
            right = f"{case['category']} {want}"
            print(f"{case['message']!r}: read {read.category} {place}, is {right}")
    took = time.perf_counter() - began
    n = len(cases)
    print(f"read {n} texts in {took * 1000:.0f} ms ({took / n * 1e6:.0f} µs a text)")
    print(
        f"sms messages={n} category_ok={category_ok / n:.1%} place_ok={place_ok / n:.1%} "
        f"asked_back={asked}"
    )


if __name__ == "__main__":
    main()
