"""The match on now at a ground, once (matches.selectors): the supporters' pages read it kept, the
turnstiles per scan from their kept kick-offs; both answer the same."""

from datetime import timedelta

import pytest
from django.utils import timezone

from safeground.entry.runtime.lookups import caches_clear, fixture_at
from safeground.matches.selectors import match_on_now
from tests import factories

pytestmark = pytest.mark.django_db


def test_the_nearest_open_match_or_none(settings) -> None:
    settings.SAFEGROUND_ENTRY_OPENS_HOURS, settings.SAFEGROUND_ENTRY_CLOSES_HOURS = 6.0, 3.0
    now = timezone.now()
    ground = factories.ground()
    factories.fixture(ground, kickoff=now - timedelta(hours=3, minutes=5))  # its gates closed
    assert match_on_now(ground) is None
    assert fixture_at(ground.pk, now) is None

    caches_clear()
    tonight = factories.fixture(ground, kickoff=now + timedelta(hours=2))
    factories.fixture(ground, kickoff=now + timedelta(hours=5))  # open, but further off
    factories.fixture(ground, kickoff=now + timedelta(hours=30))
    assert match_on_now(ground) == tonight
    assert fixture_at(ground.pk, now) == tonight.pk
