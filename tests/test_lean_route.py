"""The lean routes' body reader and answers (safeground.lean_route): a body past its limit is
never read whole, a client that hangs up is no request, and refusals take the API's JSON shape."""

import asyncio
import json

from safeground.lean_route import (
    OVER_THE_LIMIT,
    answer,
    body_read,
    declared_over,
    replay,
    too_large,
)


def chunks(*parts: bytes, hang_up: bool = False):
    """An ASGI receive sending `parts` as one request's body (then a hang-up, if asked)."""
    messages = [
        {"type": "http.request", "body": part, "more_body": i < len(parts) - 1 or hang_up}
        for i, part in enumerate(parts)
    ]
    messages.append({"type": "http.disconnect"})
    read: list[dict] = []

    async def receive() -> dict:
        read.append(messages[len(read)])
        return read[-1]

    return receive, read


def test_a_body_is_read_whole_in_its_chunks() -> None:
    receive, _ = chunks(b'{"a"', b": 1}")
    assert asyncio.run(body_read(receive, 10)) == b'{"a": 1}'


def test_a_body_past_the_limit_is_cut_off_there_and_not_read_further() -> None:
    receive, read = chunks(b"x" * 6, b"x" * 6, b"x" * 6)
    assert asyncio.run(body_read(receive, 10)) is OVER_THE_LIMIT
    assert len(read) == 2  # the third chunk never read


def test_a_client_that_hangs_up_is_no_request() -> None:
    receive, _ = chunks(b"x", hang_up=True)
    assert asyncio.run(body_read(receive, 10)) is None


def test_a_declared_length_past_the_limit_is_refused_before_reading() -> None:
    assert declared_over(b"4097", 4096) and not declared_over(b"4096", 4096)
    assert not declared_over(b"lots", 4096)


def test_the_body_is_replayed_once_for_the_application_behind() -> None:
    async def twice() -> list[dict]:
        receive = replay(b"body")
        return [await receive(), await receive()]

    first, then = asyncio.run(twice())
    assert (first["body"], first["more_body"], then["type"]) == (b"body", False, "http.disconnect")


def test_a_refusal_is_answered_in_the_apis_shape() -> None:
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    status, body = too_large("at most 10 bytes")
    asyncio.run(answer(send, status, body, [(b"retry-after", b"2")]))
    assert sent[0]["status"] == 413
    assert dict(sent[0]["headers"]) == {
        b"content-type": b"application/json",
        b"content-length": str(len(body)).encode(),
        b"retry-after": b"2",
    }
    assert json.loads(sent[1]["body"]) == {
        "code": "too_large",
        "field": "body",
        "detail": "at most 10 bytes",
    }
