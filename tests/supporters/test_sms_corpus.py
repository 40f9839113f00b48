"""The text line's reading against a corpus of texts written the way fans write them
(sms_corpus.csv: the message, the category and place a person reads in it, its language), at the
demo ground: at least 95% of categories and 98% of places right. `make bench-sms` prints the
same figures.

The last forty messages were written after the reader, and read before any word was added for
them: 90% of their categories and all their places were right (four category words it lacked,
among them Welsh "feddw", soft-mutated "meddw", were added)."""

import csv
import re
from collections import Counter
from pathlib import Path

import pytest

from safeground.supporters.categories import BY_CODE
from safeground.supporters.reading import GroundPlan, message_read
from safeground.venues.venue_file import venue_file_read

CORPUS = Path(__file__).with_name("sms_corpus.csv")
DEMO_GROUND = Path(__file__).resolve().parents[2] / "src/safeground/venues/demo/london-stadium.yaml"


def corpus() -> list[dict[str, str]]:
    with CORPUS.open(newline="") as file:
        return list(csv.DictReader(file))


def scored(plan: GroundPlan) -> tuple[int, int, int, list[str]]:
    """Categories right, places right, texts asked for their place, and what was wrong."""
    category_ok = place_ok = asked = 0
    wrong = []
    for case in corpus():
        read = message_read(case["message"], plan)
        place = (read.block if read.known else "", read.row, read.seat)
        category_ok += read.category == case["category"]
        place_ok += place == (case["block"], case["row"], case["seat"])
        asked += not read.known
        if (read.category, *place) != (case["category"], case["block"], case["row"], case["seat"]):
            wrong.append(f"{case['message']!r}: {read.category} {place}")
    return category_ok, place_ok, asked, wrong


def test_the_corpus_is_as_fans_write_every_category_both_languages_many_places() -> None:
    cases = corpus()
    assert len(cases) >= 200
    assert {c["category"] for c in cases} == set(BY_CODE)
    languages = Counter(c["language"] for c in cases)
    assert languages["cy"] >= 40 and languages["en"] >= 150
    assert sum(not c["block"] for c in cases) >= 20  # no place given
    two = [c for c in cases if len(re.findall(r"\b[NESW][\s-]?[LU]\s?\d", c["message"], re.I)) > 1]
    assert len(two) >= 8  # two places given
    assert all(c["block"] in {"", *(b.code for b in plan().blocks)} for c in cases)


def plan() -> GroundPlan:
    return GroundPlan.of_venue(venue_file_read(path=DEMO_GROUND))


def test_the_reader_gets_95_percent_of_categories_and_98_percent_of_places() -> None:
    category_ok, place_ok, _asked, wrong = scored(plan())
    total = len(corpus())
    assert category_ok / total >= 0.95, wrong
    assert place_ok / total >= 0.98, wrong


def test_welsh_texts_are_read_as_welsh_and_english_as_english() -> None:
    cases = corpus()
    right = sum(message_read(c["message"]).language == c["language"] for c in cases)
    assert right / len(cases) >= 0.98


@pytest.mark.django_db
def test_the_ground_in_the_database_reads_as_its_venue_file() -> None:
    """The line reads the ground's plan from the database; the corpus from the file."""
    from safeground.venues.services import venue_import
    from tests import factories

    ground = venue_import(path=DEMO_GROUND, organisation=factories.organisation())
    assert GroundPlan.of_ground(ground) == plan()
