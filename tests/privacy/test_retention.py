"""Retention: people whose bans all ended long enough ago are erased; nobody else, and the bans
stay as counts."""

from datetime import date, timedelta
from io import StringIO

import pytest
from django.core.management import call_command

from safeground.bans.models import AccessRecord, Ban, BanStep, Person
from safeground.bans.services import ban_approve, ban_reject, bans_roll_forward
from safeground.privacy.services import retention_apply
from tests import factories
from tests.bans.conftest import propose, user

pytestmark = pytest.mark.django_db
TODAY = date(2026, 6, 1)
DAYS = 730


@pytest.fixture
def historic(home) -> set[int]:
    """Two people whose bans ended in 2013 and 2014, as on the demo's register: ids."""
    ids = set()
    for first, last, ended in [
        ("Terry", "Oldcastle-Venn", date(2013, 5, 31)),
        ("Glen", "Pashworth", date(2014, 6, 30)),
    ]:
        starts = ended.replace(year=ended.year - 3)
        ban = factories.ban(
            home, status="expired", first_names=first, last_name=last, starts_on=starts,
            ends_on=ended,
        )  # fmt: skip
        ids.add(ban.person_id)
    return ids


def ended_ban(home, first: str, last: str, ended: date) -> Ban:
    ban = propose(home, first, last, date(1980, 1, 1), starts_on=ended - timedelta(days=365),
                  ends_on=ended)  # fmt: skip
    ban_approve(ban=ban, by=user("safety"), reason="ok")
    bans_roll_forward(today=ended + timedelta(days=1))
    ban.refresh_from_db()
    assert ban.status == "expired"
    return ban


def test_retention_erases_what_it_must_and_nothing_else(home, historic, settings) -> None:
    settings.SAFEGROUND_BAN_RETENTION_DAYS = DAYS
    cutoff = TODAY - timedelta(days=DAYS)
    gone = ended_ban(home, "Old", "Ashvenner", cutoff - timedelta(days=1))
    on_the_day = ended_ban(home, "Day", "Brellock", cutoff)
    recent = ended_ban(home, "Recent", "Corrowin", cutoff + timedelta(days=1))
    # Ended long ago, but has another ban still in force: kept whole.
    twice = ended_ban(home, "Twice", "Dellamar", cutoff - timedelta(days=100))
    again = propose(home, "Twice", "Dellamar", date(1980, 1, 1))
    ban_approve(ban=again, by=user("safety"), reason="second offence")
    # A rejected proposal long ago: nothing to keep it for.
    rejected = propose(home, "Never", "Ferrowby", date(1985, 5, 5))
    ban_reject(ban=rejected, by=user("safety"), reason="no evidence", today=date(2020, 1, 1))
    # A proposal still waiting: kept.
    waiting = propose(home, "Waiting", "Gallowent", date(1985, 5, 5))
    # The two people whose bans ended in 2013 and 2014 go too.
    people_before = Person.objects.count()
    bans_before = Ban.objects.count()

    report = retention_apply(today=TODAY)

    assert report.people_erased == 5
    erased = Person.objects.filter(erased_at__isnull=False)
    assert set(erased.values_list("pk", flat=True)) == historic | {
        gone.person_id,
        on_the_day.person_id,
        rejected.person_id,
    }
    for person in erased:
        assert (person.first_names, person.last_name, person.date_of_birth) == ("", "", None)
        assert person.supporter_number == "" and not person.photo
        assert str(person) == f"Erased person #{person.pk}"
    gone.refresh_from_db()
    assert (gone.grounds, gone.type, gone.status, gone.ends_on) == (
        "",
        "club_ban",
        "expired",
        on_the_day.ends_on - timedelta(days=1),
    )
    assert set(BanStep.objects.filter(ban=gone).values_list("reason", flat=True)) == {
        "(erased by retention)"
    }
    # Nothing else changed: the others keep their data, every ban is still counted.
    for kept in (recent, twice, again, waiting):
        person = Person.objects.get(pk=kept.person_id)
        assert person.erased_at is None and person.last_name and person.date_of_birth
        assert Ban.objects.get(pk=kept.pk).grounds
    assert Person.objects.count() == people_before
    assert Ban.objects.count() == bans_before
    assert AccessRecord.objects.filter(action="erase").count() == 5
    # Running it again erases nobody more.
    assert retention_apply(today=TODAY).people_erased == 0


def test_the_command_rolls_bans_forward_and_applies_retention(home, historic) -> None:
    factories.ban(home)  # in force: its person is kept
    out = StringIO()
    call_command("apply_retention", "--today", "2017-01-01", stdout=out)
    # The two historic bans ended in 2013 and 2014: more than 730 days before.
    assert "2 people erased" in out.getvalue()
    with pytest.raises(Exception, match="--today"):
        call_command("apply_retention", "--today", "01/01/2017")


def test_the_scheduled_task_runs_the_same_job(historic, settings) -> None:
    from safeground.privacy.tasks import register_daily_task

    result = register_daily_task.enqueue()
    assert result.return_value["people_erased"] == 2
