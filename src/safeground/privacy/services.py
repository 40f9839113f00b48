"""Personal data's daily job (ADR 0011): the register rolls its bans forward, then retention runs
every app's step in one transaction, under the legal holds open cases make.

This app sits above every app whose data it governs and names each app's part here, in order;
none of them imports it (pyproject.toml's import contracts). A new kind of personal data adds
its step to RETENTION_STEPS and its part to the subject-access export (selectors.py).
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from django.db import transaction
from django.utils import timezone

from safeground.alerts.retention import subscriptions_retention_apply
from safeground.bans.retention import people_retention_apply
from safeground.bans.services import RollForward, bans_roll_forward
from safeground.casework.retention import evidence_retention_apply, legal_holds
from safeground.deployment.retention import check_photos_retention_apply
from safeground.entry.retention import tickets_retention_apply
from safeground.exchange.retention import holder_tokens_retention_apply
from safeground.incidents.retention import photos_retention_apply
from safeground.retention import Erased, Holds
from safeground.supporters.retention import supporters_retention_apply

# After the register's own step, in this order; each leaves what `legal_holds` names.
RETENTION_STEPS: tuple[Callable[[date, Holds], Erased], ...] = (
    photos_retention_apply,  # the log's photos (incidents)
    tickets_retention_apply,  # ticket holders' names and dates of birth (entry)
    evidence_retention_apply,  # the evidence locker's files (casework)
    check_photos_retention_apply,  # the pre-match checks' photos (deployment)
    supporters_retention_apply,  # supporters' contacts, photos, phone numbers (supporters)
    subscriptions_retention_apply,  # stewards' phones' push subscriptions (alerts)
    holder_tokens_retention_apply,  # the league check's cached holder tokens (exchange)
)


@dataclass(frozen=True)
class RetentionReport:
    people_erased: int
    bans_anonymised: int
    people_kept: int
    people_held: int = 0  # due, but named in an open case (a legal hold)
    # The other apps' steps (log photos, ticket holders, evidence, check photos), in order.
    steps: tuple[Erased, ...] = ()


@transaction.atomic
def retention_apply(*, today: date | None = None, days: int | None = None) -> RetentionReport:
    """Erase what is past its retention period: the register's people whose every ban ended more
    than `days` (SAFEGROUND_BAN_RETENTION_DAYS) ago first, then each step of RETENTION_STEPS by
    its own period. What an open case names (casework's legal holds) is left by every step."""
    today = today or timezone.localdate()
    holds = legal_holds()
    register = people_retention_apply(today, holds, days=days)
    return RetentionReport(
        people_erased=register.people_erased,
        bans_anonymised=register.bans_anonymised,
        people_kept=register.people_kept,
        people_held=register.people_held,
        steps=tuple(step(today, holds) for step in RETENTION_STEPS),
    )


def register_daily(*, today: date | None = None) -> tuple[RollForward, RetentionReport]:
    """The scheduled job (and `safeground apply-retention`): roll bans forward, then retention."""
    return bans_roll_forward(today=today), retention_apply(today=today)
