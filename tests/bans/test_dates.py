"""A typed date's problems (a ticket export's dates of birth, a register search) are said in the
reader's language."""

from datetime import date

import pytest
from django.utils import translation

from safeground.bans.dates import parse_date

TODAY = date(2026, 12, 3)


@pytest.mark.parametrize(
    ("text", "english", "welsh"),
    [
        ("", "is missing", "mae ar goll"),
        ("3/4/95", "'3/4/95' has a two-digit year; give all four digits (dd/mm/yyyy)",
         "mae gan '3/4/95' flwyddyn dau ddigid; rhowch bob un o'r pedwar digid (dd/mm/bbbb)"),
        ("soon", "'soon' is not a date (use yyyy-mm-dd or dd/mm/yyyy)",
         "nid yw 'soon' yn ddyddiad (defnyddiwch bbbb-mm-dd neu dd/mm/bbbb)"),
        ("31/02/1990", "'31/02/1990' is not a real date",
         "nid yw '31/02/1990' yn ddyddiad go iawn"),
        ("2030-01-01", "'2030-01-01' is in the future", "mae '2030-01-01' yn y dyfodol"),
        ("1899-12-31", "'1899-12-31' is before 1900", "mae '1899-12-31' cyn 1900"),
    ],
)  # fmt: skip
def test_a_dates_problem_in_english_and_welsh(text, english, welsh) -> None:
    assert parse_date(text, today=TODAY) == (None, english)
    with translation.override("cy"):
        assert parse_date(text, today=TODAY) == (None, welsh)
    assert parse_date("26/10/1990", today=TODAY) == (date(1990, 10, 26), "")
