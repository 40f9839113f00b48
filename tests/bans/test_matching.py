"""Matching names and dates of birth: what is flagged, what is not, and why."""

from datetime import date

import pytest

from safeground.bans.matching import Banned, Holder, match, name_key, swapped

THRESHOLD = 85.0
DOB = date(1988, 4, 12)


def flagged(holder_name: str, holder_dob: date, ban_name: str, ban_dob: date = DOB):
    return match(
        [Holder(1, holder_name, holder_dob)], [Banned(7, ban_name, ban_dob)], threshold=THRESHOLD
    )


def test_accents_are_folded() -> None:
    [found] = flagged("Sean Dunmorrow", DOB, "Seán Dúnmorrow")
    assert found.score == 100 and "same date of birth" in found.reasons


def test_word_order_is_ignored() -> None:
    [found] = flagged("DUNMORROW Sean", DOB, "Sean Dunmorrow")
    assert found.score == 100


def test_apostrophes_are_dropped() -> None:
    assert name_key("Kieran O'Fenwright") == name_key("kieran ofenwright")
    assert name_key("Kieran O’Fenwright") == name_key("Kieran OFenwright")
    assert flagged("Kieran OFenwright", DOB, "Kieran O'Fenwright")[0].score == 100


def test_hyphens_split_or_join_a_name() -> None:
    assert flagged("Lewis Garrowby Hale", DOB, "Lewis Garrowby-Hale")[0].score == 100
    assert flagged("Lewis Garrowbyhale", DOB, "Lewis Garrowby-Hale")[0].score == 100
    assert flagged("Hale-Garrowby Lewis", DOB, "Lewis Garrowby Hale")[0].score == 100


def test_a_small_misspelling_still_matches_with_its_score() -> None:
    [found] = flagged("Rian Larkhaven", DOB, "Ryan Larkhaven")
    assert 85 <= found.score < 100
    assert found.reasons[0].startswith("name 93% alike")


def test_a_missing_middle_name_still_matches() -> None:
    assert flagged("Jamie Hollindale", DOB, "Jamie Lee Hollindale")[0].score >= THRESHOLD


def test_day_and_month_swapped_is_a_weaker_match() -> None:
    [found] = flagged("Marcus Kestrelle", date(1990, 8, 5), "Marcus Kestrelle", date(1990, 5, 8))
    assert found.score == 90
    assert "date of birth with day and month swapped" in found.reasons
    # A misspelt name and a swapped date together fall under the threshold.
    assert flagged("Markus Kestrele", date(1990, 8, 5), "Marcus Kestrelle", date(1990, 5, 8)) == []


def test_a_namesake_born_on_another_day_is_not_flagged() -> None:
    assert flagged("Dean Pelliter", date(1979, 3, 2), "Dean Pelliter", date(1982, 6, 14)) == []


def test_another_person_born_the_same_day_is_not_flagged() -> None:
    assert flagged("Dean Pelliter", DOB, "Owen Rathbourne") == []


def test_swapped_only_when_it_is_another_real_date() -> None:
    assert swapped(date(1990, 5, 8)) == date(1990, 8, 5)
    assert swapped(date(1990, 5, 5)) is None
    assert swapped(date(1990, 5, 13)) is None


def test_many_holders_only_compare_with_their_date_of_birth() -> None:
    bans = [Banned(i, f"Person {i}", date(1980, 1, 1 + i % 28)) for i in range(200)]
    holders = [Holder(i, f"Person {i}", date(1999, 1, 1)) for i in range(5000)]
    assert match(holders, bans, threshold=THRESHOLD) == []


# Letters NFKD leaves whole (no base letter plus accent): each is spelt out, never dropped.
NO_DECOMPOSITION = [
    ("Ł", "l"),
    ("ł", "l"),
    ("Ø", "o"),
    ("ø", "o"),
    ("Đ", "d"),
    ("đ", "d"),
    ("Ð", "d"),
    ("ð", "d"),
    ("ß", "ss"),
    ("ẞ", "ss"),
    ("Æ", "ae"),
    ("æ", "ae"),
    ("Œ", "oe"),
    ("œ", "oe"),
    ("Þ", "th"),
    ("þ", "th"),
    ("ı", "i"),
    ("Ħ", "h"),
    ("ħ", "h"),
    ("Ŧ", "t"),
    ("ŧ", "t"),
    ("Ŋ", "n"),
    ("ŋ", "n"),
]


@pytest.mark.parametrize(("letter", "spelt"), NO_DECOMPOSITION)
def test_a_letter_without_a_decomposition_is_folded_not_dropped(letter: str, spelt: str) -> None:
    assert name_key(f"Ka{letter}ro") == f"ka{spelt}ro"


def test_names_with_such_letters_match_their_plain_spelling() -> None:
    assert flagged("Lukasz Zolwinski", DOB, "Łukasz Żółwiński")[0].score == 100
    assert flagged("Soren Hoeg", DOB, "Søren Høeg")[0].score == 100
    assert flagged("Dordevic Dorde", DOB, "Đorđe Đorđević")[0].score == 100
    assert flagged("Aesa Thorsdottir", DOB, "Æsa Þórsdóttir")[0].score == 100
    assert flagged("Hans Grossmann", DOB, "Hans Großmann")[0].score == 100
    assert flagged("Yilmaz Ali", DOB, "Ali Yılmaz")[0].score == 100
