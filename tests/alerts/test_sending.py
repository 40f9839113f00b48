"""How a batch goes out: each message encrypted to its own phone's keys, over a few kept-alive
connections, under one VAPID token per push service (checked for real by
bench/push_receiver.py)."""

import json
from collections.abc import Iterator

import pytest
from bench.push_receiver import PushReceiver, b64url

from safeground.alerts import push, vapid


@pytest.fixture
def receiver() -> Iterator[PushReceiver]:
    made = PushReceiver(server_key=vapid.public_key())
    yield made
    made.close()


def pushes_to(phones) -> list[push.Push]:
    return [
        push.Push(
            recipient_id=number,
            subscription_id=number,
            endpoint=phone.endpoint,
            p256dh=phone.p256dh,
            auth=b64url(phone.auth),
            payload=json.dumps({"for": phone.token}).encode(),
        )
        for number, phone in enumerate(phones)
    ]


def test_a_batch_goes_each_to_its_own_phone_over_kept_connections_under_one_token(
    receiver, settings
) -> None:
    settings.SAFEGROUND_PUSH_CONCURRENCY = 4
    phones = [receiver.phone() for _ in range(40)]
    outcomes: list[push.Outcome] = []

    push.deliver(pushes_to(phones), outcomes.extend)

    assert len(outcomes) == 40 and all(outcome.sent for outcome in outcomes)
    messages = receiver.wait_for(40)
    # Each decrypted with its own phone's private key, and carries what was meant for it.
    assert all(message.json() == {"for": message.phone.token} for message in messages)
    assert {message.phone.token for message in messages} == {phone.token for phone in phones}
    assert all(message.urgency == "high" for message in messages)
    # Kept-alive connections, no more than the concurrency: not one per message.
    assert 1 <= len(receiver.connections) <= 4
    # One signed token for the push service, not one per message.
    assert len(receiver.verified) == 1


def test_keys_that_are_not_a_phones_fail_alone_and_for_good(receiver) -> None:
    good, bad = pushes_to([receiver.phone(), receiver.phone()])
    bad = push.Push(**{**bad.__dict__, "p256dh": b64url(b"\x04" + b"\x01" * 64)})
    outcomes: list[push.Outcome] = []

    push.deliver([good, bad], outcomes.extend)

    by_id = {outcome.push.recipient_id: outcome for outcome in outcomes}
    assert by_id[good.recipient_id].sent
    refused = by_id[bad.recipient_id]
    assert refused.status is None and refused.error.startswith("refused:")
    assert not refused.retry  # never tried again: the keys will not get better
    assert [message.phone.token for message in receiver.wait_for(1)] == [
        good.endpoint.rsplit("/", 1)[1]
    ]
