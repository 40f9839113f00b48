"""The API schema's kick-off pattern and the service agree: every kick-off the pattern allows is
read (schemathesis's positive data relies on it), and the days the calendar lacks are refused by
both."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from safeground.matches.fixture_fields import KICKOFF_PATTERN, _kickoff

PATTERN = re.compile(KICKOFF_PATTERN)


@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.from_regex(KICKOFF_PATTERN, fullmatch=True))
def test_every_kickoff_the_schema_allows_is_read(raw: str) -> None:
    problems: list[tuple[str, str]] = []
    assert _kickoff(raw, problems) is not None, problems


@pytest.mark.parametrize(
    "raw",
    ["2026-11-31 15:00", "31/11/2026 15:00", "2026-02-29 15:00", "29/02/2100 15:00",
     "1900-02-29T15:00", "2026-04-31T15:00:00Z", "1899-08-01 15:00", "2200-01-01 15:00"],
)  # fmt: skip
def test_a_day_the_calendar_lacks_is_refused_by_the_schema_and_the_service(raw: str) -> None:
    problems: list[tuple[str, str]] = []
    assert not PATTERN.match(raw)
    assert _kickoff(raw, problems) is None and problems[0][0] == "kickoff"


@pytest.mark.parametrize(
    "raw",
    ["2028-02-29 15:00", "29/02/2000 19:45", "2026-12-05T15:00:00.5+01:00", "2026-12-05T15:00Z"],
)
def test_leap_days_and_iso_forms_are_allowed_by_both(raw: str) -> None:
    assert PATTERN.match(raw) and _kickoff(raw, []) is not None
