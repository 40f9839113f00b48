"""A club's side of a large check: blinded and unblinded in worker processes with the same
tokens as in one, and each holder's token cached under the exchange's key, so a holder checked
before is not sent to the exchange again until the key changes; the cache has a retention
period like the ticket holders' details it comes from. The exchange's evaluation is the real
one, in this process (exchange/oprf.py)."""

import base64
import time
from datetime import date, timedelta

import pytest
from django.utils import timezone

from safeground.exchange import blinding, checking, oprf, tokens
from safeground.exchange.models import HolderToken
from safeground.privacy.services import retention_apply
from safeground.retention import cutoff

pytestmark = pytest.mark.django_db


class Exchange:
    """The exchange's evaluation, counting the blinded elements it is sent."""

    def __init__(self) -> None:
        self.sent = 0

    def __call__(self, blinded: list[bytes]) -> bytes:
        self.sent += len(blinded)
        return oprf.evaluate(blinded)


def people(*numbers: int) -> list[tuple[str, date]]:
    return [(f"Avery Quellmoor{n}", date(1990, 1, 1 + n)) for n in numbers]


def holders(*numbers: int) -> list[bytes]:
    return [tokens.holder_input(name, born) for name, born in people(*numbers)]


def expected(inputs: list[bytes]) -> list[str]:
    """What the exchange's key makes of each input, evaluated in the clear."""
    return [oprf.evaluator().evaluate_known_input(item).hex() for item in inputs]


def test_a_check_in_worker_processes_gives_the_tokens_of_one_and_checks_the_proof() -> None:
    inputs = holders(*range(20))
    exchange = Exchange()
    made = blinding.evaluated(inputs, exchange, oprf.public_key(), processes=2, batch=6)
    assert [token.hex() for token in made] == expected(inputs)
    assert exchange.sent == 20  # four batches, each once
    with pytest.raises(oprf.OprfRefused):
        blinding.evaluated(inputs, exchange, bytes(32), processes=2, batch=6)  # another key


def test_a_holder_checked_before_is_not_sent_again_until_the_key_changes(settings) -> None:
    key, exchange = oprf.public_key(), Exchange()
    first = people(1, 2, 3)
    made = checking.holder_tokens(first + first[:1], key, exchange)
    assert made == expected(holders(1, 2, 3, 1))
    assert exchange.sent == 3  # the repeated holder once

    again = people(1, 2, 3, 4)
    assert checking.holder_tokens(again, key, exchange) == expected(holders(1, 2, 3, 4))
    assert exchange.sent == 3 + 1  # only the new holder
    assert HolderToken.objects.count() == 4
    assert not HolderToken.objects.filter(token__in=[i.hex() for i in holders(1, 2, 3, 4)]).exists()

    settings.SAFEGROUND_EXCHANGE_OPRF_SEED = base64.b64encode(bytes(range(32))).decode()
    rotated = oprf.public_key()
    assert rotated != key
    assert checking.holder_tokens(again, rotated, exchange) == expected(holders(1, 2, 3, 4))
    assert exchange.sent == 4 + 4  # a new key: every holder again


def test_a_large_check_streams_its_batches_through_the_workers_each_holder_once(settings) -> None:
    """Folded, looked up in the cache and cached again a batch at a time while the workers
    blind: a holder cached before, or met again in a later batch, is not sent again."""
    settings.SAFEGROUND_EXCHANGE_PROCESSES = 2
    key, exchange = oprf.public_key(), Exchange()
    checking.holder_tokens(people(3, 4), key, exchange, batch=4)
    crowd = people(*range(11)) + people(7, 0, 12)  # 7 and 0 again, three batches on
    made = checking.holder_tokens(crowd, key, exchange, batch=4)
    assert made == expected([tokens.holder_input(name, born) for name, born in crowd])
    assert exchange.sent == 2 + 10  # twelve people, two of them cached before
    assert HolderToken.objects.count() == 12


def test_cached_tokens_unused_for_the_ticket_retention_period_are_erased(settings) -> None:
    checking.holder_tokens(people(1, 2), oprf.public_key(), Exchange())
    today = timezone.localdate()
    stale = today - timedelta(days=settings.SAFEGROUND_TICKET_RETENTION_DAYS + 1)
    oldest = HolderToken.objects.order_by("pk")[:1].get()
    oldest.checked_at = cutoff(stale, 0)
    oldest.save()
    report = retention_apply(today=today)
    step = next(step for step in report.steps if step.what == "league holder tokens")
    assert (step.erased, HolderToken.objects.count()) == (1, 1)


def test_a_worker_that_dies_is_said_at_once_not_waited_for() -> None:
    """A worker process that cannot blind (here: an input of more than 2^16 - 1 bytes makes
    voprf raise what the worker does not catch) ends the check with an error, not a hang."""
    inputs = [b"x" * 70_000, *holders(*range(7))]
    started = time.monotonic()
    with pytest.raises((RuntimeError, ValueError)):
        blinding.evaluated(inputs, Exchange(), oprf.public_key(), processes=2, batch=4)
    assert time.monotonic() - started < 30
