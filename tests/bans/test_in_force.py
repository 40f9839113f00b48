"""A ban in force on a day, once (bans.models): the query method on the edge days, and the
turnstile's SQL reading of the same rule giving the same answers."""

from datetime import date, timedelta

import pytest
from django.db import connection
from django.utils import timezone

from safeground.bans.models import Ban, in_force_sql
from tests import factories

Status = Ban.Status


def in_force(ban: Ban, day: date) -> bool:
    return Ban.objects.in_force_on(day).filter(pk=ban.pk).exists()


def in_force_by_sql(ban: Ban, day: date) -> bool:
    condition = in_force_sql("b", "%s")
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM bans_ban b WHERE b.id = %s AND {condition}",
            [ban.pk, *[day] * condition.count("%s")],
        )
        return bool(cursor.fetchone()[0])


@pytest.fixture
def today() -> date:
    return timezone.localdate()


def edges(home, today: date) -> list[tuple[str, Ban, date, bool]]:
    """(what, ban, day, in force that day?) on the edges of the rule."""
    day = timedelta(days=1)
    starts_today = factories.ban(home, starts_on=today, ends_on=today + 30 * day)
    ends_today = factories.ban(home, starts_on=today - 30 * day, ends_on=today)
    ended_yesterday = factories.ban(home, starts_on=today - 30 * day, ends_on=today - day)
    life = factories.ban(home, starts_on=today - 400 * day, is_life=True)
    revoked = factories.ban(
        home, status=Status.REVOKED, starts_on=today - 30 * day, ends_on=today + 30 * day
    )
    pending = factories.ban(
        home, status=Status.PROPOSED, starts_on=today - day, ends_on=today + day
    )
    rejected = factories.ban(
        home, status=Status.REJECTED, starts_on=today - day, ends_on=today + day
    )
    not_yet = factories.ban(home, status=Status.APPROVED)  # 2099 to 2100
    expired = factories.ban(home, status=Status.EXPIRED)  # 2012-06-01 to 2013-05-31
    appealed = factories.ban(home, status=Status.APPEALED)
    upheld = factories.ban(home, status=Status.UPHELD)
    return [
        ("starts today", starts_today, today, True),
        ("starts today, the day before", starts_today, today - day, False),
        ("ends today", ends_today, today, True),
        ("ends today, the day after", ends_today, today + day, False),
        ("ended yesterday, not yet rolled forward", ended_yesterday, today, False),
        ("life ban", life, today, True),
        ("life ban, years on", life, today + 4000 * day, True),
        ("revoked today", revoked, today, False),
        ("revoked today, the day before", revoked, today - day, True),
        ("pending approval", pending, today, False),
        ("rejected", rejected, today, False),
        ("approved, not started", not_yet, today, False),
        ("approved, on its start day", not_yet, date(2099, 1, 1), True),
        ("expired, on its last day", expired, date(2013, 5, 31), True),
        ("expired, the day after", expired, date(2013, 6, 1), False),
        ("expired, today", expired, today, False),
        ("under appeal", appealed, today, True),
        ("upheld on appeal", upheld, today, True),
    ]


def test_a_ban_in_force_on_the_edge_days(home, today) -> None:
    answers = {what: in_force(ban, day) for what, ban, day, _ in edges(home, today)}
    assert answers == {what: expected for what, _, _, expected in edges(home, today)}


def test_the_turnstiles_sql_reads_the_rule_as_the_query_method_does(home, today) -> None:
    cases = edges(home, today)
    assert {what: in_force_by_sql(ban, day) for what, ban, day, _ in cases} == {
        what: expected for what, _, _, expected in cases
    }
