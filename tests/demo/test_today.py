"""The demo's own story: `safeground demo` (what `make run` calls) leaves a match kicking off a few
hours from now, the cup tie again, that the scanners can pair with at once."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from safeground.demo.season import RERUN_STAGE
from safeground.entry.models import Ticket
from safeground.entry.runtime import lookups
from safeground.matches.models import Fixture

pytestmark = pytest.mark.django_db


def test_the_demo_has_the_cup_tie_again_today_with_its_layout_shares_and_tickets(capsys) -> None:
    call_command("demo")
    cup_tie = Fixture.objects.get(away_club__name="Chelsea", stage="Fourth round")
    rerun = Fixture.objects.get(stage=RERUN_STAGE)
    now = timezone.now()
    assert now + timedelta(hours=2, minutes=45) <= rerun.kickoff <= now + timedelta(hours=3)
    assert rerun.kickoff.minute % 15 == 0
    assert (rerun.home_club, rerun.away_club) == (cup_tie.home_club, cup_tie.away_club)
    assert set(rerun.zones.values_list("zone__code", "use")) == set(
        cup_tie.zones.values_list("zone__code", "use")
    )
    assert set(rerun.shares.values_list("organisation__name", "purpose")) == set(
        cup_tie.shares.values_list("organisation__name", "purpose")
    )
    rerun_tickets = set(Ticket.objects.filter(fixture=rerun).values_list("barcode", flat=True))
    cup_tickets = set(Ticket.objects.filter(fixture=cup_tie).values_list("barcode", flat=True))
    assert len(rerun_tickets) == len(cup_tickets) > 0
    assert all(barcode.startswith("RERUN-") for barcode in rerun_tickets)
    assert not rerun_tickets & cup_tickets
    # The match the scanners pair with now: the rerun, not a 2016 one.
    lookups.caches_clear()
    assert lookups.fixture_at(rerun.ground_id, now) == rerun.pk
    assert "Today's match" in capsys.readouterr().out


def test_a_demo_loaded_on_an_earlier_day_has_its_rerun_moved_to_today(capsys) -> None:
    call_command("demo")
    rerun = Fixture.objects.get(stage=RERUN_STAGE)
    Fixture.objects.filter(pk=rerun.pk).update(kickoff=timezone.now() - timedelta(days=2))
    call_command("demo", if_empty=True)
    rerun.refresh_from_db()
    assert rerun.kickoff > timezone.now() + timedelta(hours=2)
    assert Fixture.objects.filter(stage=RERUN_STAGE).count() == 1
