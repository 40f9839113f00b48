"""Schemathesis against /api/openapi.json: every operation, the same generated requests sent as
every role of the cast, as nobody and as a turnstile's device key. Whatever arrives, the answer
is never a 5xx, its status is one the operation documents, and its content type and body match
the schema; and the schema is honest both ways: a request it says is invalid is refused
(negative_data_rejection), and one it says is valid is never refused as malformed: its answer is
a 2xx, or 401/403/404/409/429 (who asks, what exists, what happened before), never a 400 or 422
(positive_data_acceptance). Positive requests name things that exist in the world (an
organisation, a steward, a category, a turnstile): the schema states the form of a name, the
database which names exist.

Requests go in process (schemathesis's WSGI transport into Django's `wsgi_app`, inside
pytest-django's database), so nothing listens on a port. `POST /api/entry/scan` is also served
by the lean ASGI route before Django (entry/runtime/asgi.py): it is fuzzed a second time through
`safeground.asgi.application` over schemathesis's ASGI transport, on committed data because its
scan threads hold Django connections of their own.

Bounded and repeatable: a fixed number of examples per operation (each sent as every role),
derandomized, no example database, no shrinking.
"""

import io
import os
import re
import secrets
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import hypothesis
import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, transaction
from django.test import Client
from hypothesis import HealthCheck, Phase, given
from hypothesis import strategies as st
from PIL import Image
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.config._checks import PositiveDataAcceptanceConfig
from schemathesis.core import NOT_SET
from schemathesis.core.failures import FailureGroup
from schemathesis.core.parameters import ParameterLocation
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    positive_data_acceptance,
    response_schema_conformance,
    status_code_conformance,
)

from safeground.asgi import application, wsgi_app
from safeground.entry.runtime import lookups
from safeground.incidents.broadcasting import broadcast_send
from safeground.incidents.photos import log_entry_photo_add
from safeground.incidents.posts import steward_post_assign
from safeground.incidents.services import Place, log_entry_append, log_entry_assign
from safeground.matches.services import plan_generate
from safeground.partners.services import broadcast_told
from tests import factories

# Generated requests per operation; each is sent once per credential (12), so 42 operations make
# about 42 * EXAMPLES * 12 requests. SCHEMA_FUZZ_EXAMPLES=200 for a deeper run by hand.
EXAMPLES = int(os.environ.get("SCHEMA_FUZZ_EXAMPLES", "6"))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    negative_data_rejection,
    positive_data_acceptance,
]
# What a request the schema calls valid may get: never a 400/422 (the schema should have said),
# nor a 5xx (not_a_server_error says so too).
ACCEPTED = ["2xx", "401", "403", "404", "409", "429"]
SETTINGS = hypothesis.settings(
    max_examples=EXAMPLES,
    derandomize=True,  # the same requests every run
    database=None,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: a failure prints its request
    suppress_health_check=list(HealthCheck),
)

# Every string the schema declares says it holds no NUL, and every request body forbids the
# properties it does not declare (request_body.Body): a positive request holds no NUL anywhere.


def _image(kind: str) -> st.SearchStrategy[bytes]:
    """Small real images of one format: what the photo part's declared types (its encoding's
    contentType) mean, and what the service checks its first bytes against."""

    def encoded(size: tuple[int, int], colour: tuple[int, int, int]) -> bytes:
        out = io.BytesIO()
        Image.new("RGB", size, colour).save(out, format=kind)
        return out.getvalue()

    side = st.integers(min_value=1, max_value=8)
    channel = st.integers(min_value=0, max_value=255)
    return st.builds(encoded, st.tuples(side, side), st.tuples(channel, channel, channel))


for _type, _kind in (("image/jpeg", "JPEG"), ("image/png", "PNG"), ("image/webp", "WEBP")):
    schemathesis.openapi.media_type(_type, _image(_kind))

schema = schemathesis.openapi.from_wsgi("/api/openapi.json", wsgi_app)
schema.config.checks.positive_data_acceptance = PositiveDataAcceptanceConfig(
    expected_statuses=ACCEPTED
)
OPERATIONS = [result.ok() for result in schema.get_all_operations()]


@dataclass
class World:
    """Real objects for the path parameters, and each caller's credentials."""

    ids: dict[str, Any]
    # "METHOD /path": (query, body) of a request that is well formed for the world, so at least
    # one request per operation gets past validation to the service, as each role.
    valid: dict[str, tuple[dict[str, Any], Any]] = field(default_factory=dict)
    callers: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    # Body fields that name something in the database, with a name that exists.
    names: dict[str, Any] = field(default_factory=dict)


DECISION = {"decision_maker": "police", "decision": "Hold the away end", "rationale": "Surge"}


def _a_decision(cup: Any, cast: Any) -> Any:
    """A decision of the cup tie with a review time, so it may be amended and reviewed."""
    from django.utils import timezone

    from safeground.decisions.services import DecisionParts, decision_record

    return decision_record(
        fixture=cup,
        loggist=cast["loggist"],
        decision_maker=cast["police"],
        parts=DecisionParts(
            decision="Hold", rationale="Surge", review_at=timezone.now() + timedelta(hours=1)
        ),
    )


def _world() -> World:
    day = factories.match_day()
    cast, cup = day.cast, day.cup_tie
    for name in ("steward", "supervisor"):
        steward_post_assign(
            fixture=cup, steward=cast[name], assigned_by=cast["safety"], zone="away-south-cup"
        )
    report = log_entry_append(
        fixture=cup,
        author=cast["loggist"],
        category="missile",
        text="Coins thrown towards the home section",
        place=Place(block="S-L1"),
    )
    photo = log_entry_photo_add(entry=report, author=cast["loggist"], upload=factories.upload())
    log_entry_assign(entry=report, author=cast["loggist"], assignee=cast["steward"])
    case = factories.case(cup, entries=[report], by=cast["banofficer"])
    plan_generate(fixture=cup, by=cast["safety"])
    broadcast = broadcast_send(fixture=cup, sent_by=cast["safety"], script="hold")
    # What partners were told of it (its hook runs after commit, which this test never does).
    told = broadcast_told(broadcast)
    # A check at the stewards' post: a steward records only their post's checks.
    check = next(c for c in factories.checks(cup) if c.zone and c.zone.code == "away-south-cup")
    factories.ticket(cup, barcode="AWAY-1", block="S-L2")
    _, key = factories.device(cast.home)
    decision = _a_decision(cup, cast)
    ban = factories.ban(cast.home)  # on the home club's register: a person and their ban
    lookups.caches_clear()
    world = World(
        ids={
            "fixture_id": cup.pk,
            "entry_id": report.pk,
            "photo_id": photo.pk,
            "broadcast_id": broadcast.pk,
            "check_id": check.pk,
            "organisation": cast.away.slug,
            "code": day.ground.code,
            "case_id": case.pk,
            "decision_id": decision.pk,
            "person_id": ban.person_id,
            "ban_id": ban.pk,
            "identifier": told.identifier,
        }
    )
    scan = {
        "barcode": "AWAY-1",
        "turnstile": "F03",
        "scanned_at": (cup.kickoff - timedelta(minutes=40)).isoformat(),
        "nonce": str(uuid.UUID(int=1)),
    }
    fixtures = "/api/fixtures/{fixture_id}"
    entry = fixtures + "/log/{entry_id}"
    world.valid = {
        "POST /api/fixtures": ({}, {
            "ground": day.ground.code, "opponent": "Northgate Albion",
            "competition": factories.LEAGUE, "kickoff": "2030-08-10 15:00", "layout": "league",
            "away_allocation": 300, "shared_with": [cast.police.slug]}),
        f"PATCH {fixtures}": ({}, {"away_allocation": 550}),
        f"POST {fixtures}/shares": ({}, {"organisation": cast.police.slug}),
        f"POST {fixtures}/plan": ({}, {}),
        f"POST {fixtures}/plan/sign": ({}, {"version": 1}),
        f"POST {fixtures}/plan/ready": ({}, {"override_reason": "checks done on paper"}),
        f"POST {fixtures}/log": ({}, {"category": "missile", "block": "S-L2",
                                      "text": "Bottle thrown", "severity": 3}),
        f"POST {entry}/assign": ({}, {"assignee": "steward"}),
        f"POST {entry}/escalate": ({}, {"to": "police"}),
        f"POST {entry}/status": ({}, {"status": "resolved"}),
        f"POST {entry}/correct": ({}, {"note": "typo", "text": "Coins"}),
        f"POST {entry}/task": ({}, {"task": "accepted"}),
        f"POST {fixtures}/posts": ({}, {"steward": "steward", "zone": "away-south-cup"}),
        f"POST {fixtures}/broadcasts": ({}, {"script": "hold"}),
        f"POST {fixtures}/log/checkpoints": ({}, {"full_time": True}),
        f"POST {fixtures}/who-was-there": ({}, {"entries": [report.pk],
                                                "reason": "identify the thrower"}),
        f"POST {fixtures}/who-was-there/count": ({}, {"entries": [report.pk]}),
        f"POST {fixtures}/checks/{{check_id}}/result": ({}, {"outcome": "pass"}),
        "POST /api/cases/{case_id}/outcomes": ({}, {"kind": "arrest", "club": "away",
                                                     "reference": "RC/1"}),
        f"POST {fixtures}/decisions": ({}, DECISION),
        f"POST {fixtures}/decisions/{{decision_id}}/amend": ({}, {**DECISION, "reason": "x"}),
        f"POST {fixtures}/decisions/{{decision_id}}/review": ({}, {"note": "Stands"}),
        f"POST {fixtures}/radio/down": ({}, {"decision_maker": "police"}),
        f"POST {fixtures}/radio/up": ({}, {"decision_maker": "police"}),
        f"POST {fixtures}/arrests": ({}, {"arrests": [{"offence_group": "alcohol",
                                                       "club": "away", "reference": "RC/2"}]}),
        "POST /api/entry/scan": ({}, scan),
        "GET /api/entry/bundle": ({"turnstile": "F03"}, NOT_SET),
        "POST /api/entry/offline-scans": (
            {}, {"scans": [scan | {"decision": "admit", "reason": None}]}),
    }  # fmt: skip
    world.names = {
        "organisation": cast.police.slug,
        "shared_with": [cast.police.slug],
        "ground": day.ground.code,
        "competition": factories.LEAGUE,
        "layout": "league",
        "assignee": "steward",
        "steward": "steward",
        "decision_maker": "police",
        "category": "missile",
        "turnstile": "F03",
        "zone": "away-south-cup",
        "block": "S-L2",
        "first_row": "B",
        "last_row": "C",
        "gate": "F",
        "concourse": "S-L",
        # a time the turnstile's clock has passed (one from the future is refused)
        "scanned_at": scan["scanned_at"],
        # and one the log's has passed, for the same reason
        "observed_at": (cup.kickoff + timedelta(minutes=30)).isoformat(),
    }
    csrf = secrets.token_hex(16)
    world.callers["anonymous"] = {"headers": {}, "cookies": {}}
    world.callers["device"] = {"headers": {"X-Device-Key": key}, "cookies": {}}
    for username, _, _ in factories.CAST:
        client: Client = factories.logged_in(cast[username])
        world.callers[username] = {
            # ninja's session auth checks CSRF as a browser's form would be checked.
            "headers": {"X-CSRFToken": csrf},
            "cookies": {"sessionid": client.cookies["sessionid"].value, "csrftoken": csrf},
        }
    return world


def _cases(operation: Any, world: World) -> st.SearchStrategy:
    """Valid and invalid requests, with random path parameters and with the world's real ones
    (the only way past a 404 to the body's checks); a valid one names what exists."""
    names = re.findall(r"{(\w+)}", operation.path)
    real = {name: world.ids[name] for name in names if name in world.ids}
    by_mode = {}
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
        by_mode[mode] = [operation.as_strategy(generation_mode=mode)]
        if real:
            by_mode[mode].append(operation.as_strategy(generation_mode=mode, path_parameters=real))
    positive = st.one_of(by_mode[GenerationMode.POSITIVE])
    return st.one_of(
        positive.map(lambda case: _naming_what_exists(case, world)),
        *by_mode[GenerationMode.NEGATIVE],
    )


def _naming_what_exists(case: Any, world: World) -> Any:
    case.body = _named(case.body, world)
    if case.query and "turnstile" in case.query:
        case.query = {**case.query, "turnstile": world.names["turnstile"]}
    return case


def _named(body: Any, world: World) -> Any:
    """The body with each field that names something (at any depth: an offline upload's scans
    name their turnstile) naming what exists; an empty one names nothing and stays."""
    if isinstance(body, dict):
        return {
            key: world.names[key] if key in world.names and value else _named(value, world)
            for key, value in body.items()
        }
    if isinstance(body, list):
        return [_named(value, world) for value in body]
    return body


def _well_formed(operation: Any, world: World) -> Any:
    """The world's well-formed request for the operation, or None when it needs a body we have
    none for (the photo upload: its multipart body is generated)."""
    names = re.findall(r"{(\w+)}", operation.path)
    query, body = world.valid.get(_label(operation), ({}, NOT_SET))
    if body is NOT_SET and operation.body:
        return None
    media = "application/json" if body is not NOT_SET else None
    return operation.Case(
        path_parameters={name: world.ids[name] for name in names},
        query=query or None,
        body=body,
        media_type=media,
    )


def _label(operation: Any) -> str:
    return f"{operation.method.upper()} {operation.path}"


@dataclass
class Tally:
    requests: int = 0
    examples: int = 0
    seconds: float = 0.0
    statuses: Counter[int] = field(default_factory=Counter)
    operations: set[str] = field(default_factory=set)
    pairs: set[tuple[str, str]] = field(default_factory=set)


TALLY = Tally()


@pytest.fixture(scope="module", autouse=True)
def _tally(request: pytest.FixtureRequest) -> Iterator[None]:
    """The counts, printed once at the end of the module (operations x callers, requests)."""
    started = time.monotonic()
    yield
    TALLY.seconds += time.monotonic() - started
    if not TALLY.requests:
        return
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(
            f"\nschema fuzz: {len(TALLY.operations)} operations, {len(TALLY.pairs)} "
            f"operation x caller pairs, {TALLY.examples} examples, {TALLY.requests} requests "
            f"in {TALLY.seconds:.0f} s; statuses {dict(sorted(TALLY.statuses.items()))}"
        )


def _send_as_everyone(world: World, case: Any, send: Callable[..., Any]) -> None:
    TALLY.examples += 1
    for caller, credentials in world.callers.items():
        headers = {**(case.headers or {}), **credentials["headers"]}
        response = send(case, headers=headers, cookies=credentials["cookies"])
        TALLY.requests += 1
        TALLY.statuses[response.status_code] += 1
        TALLY.pairs.add((_label(case.operation), caller))
        checks = CHECKS
        if _only_credentials_negated(case) or _not_negated(case):
            checks = [check for check in CHECKS if check is not negative_data_rejection]
        try:
            case.validate_response(response, checks=checks, headers=headers)
        except FailureGroup as failure:
            raise AssertionError(f"as {caller}: {failure}") from failure


def _not_negated(case: Any) -> bool:
    """A case marked negative that schemathesis could not make invalid: no mutation, described as
    a positive test case (a multipart body, whose extra fields all go as text, can come out so):
    the request is a valid one, which the server rightly accepts."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_negative:
        return False
    data = meta.phase.data
    return not getattr(data, "mutations", True) and data.description == "Positive test case"


def _only_credentials_negated(case: Any) -> bool:
    """A request made invalid only in its cookies or headers (the session cookie or device key
    the schema asks for, which each caller then sends as its own, or not) and perhaps by query
    parameters the operation does not declare (ignored, as HTTP APIs do; a case with those
    besides is let through, its declared ones unchecked)."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_negative:
        return False
    negated = {loc for loc, info in meta.components.items() if info.mode.is_negative}
    if ParameterLocation.QUERY in negated:
        declared = {parameter.name for parameter in case.operation.query}
        if not set(case.query or {}) - declared:
            return False  # the negation is in a declared parameter
        negated.discard(ParameterLocation.QUERY)
    return negated <= {ParameterLocation.COOKIE, ParameterLocation.HEADER}


@pytest.fixture
def keep_connection() -> Iterator[None]:
    """Django's WSGI handler closes the database connection after each request; inside the
    test's transaction it must stay open, as django.test.Client keeps it."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture(scope="class")
def shared_world(django_db_setup, django_db_blocker) -> Iterator[World]:
    """The world made once for every operation, in a transaction of its own that is rolled back
    after the last: each test runs in a savepoint inside it (pytest-django's `db`), so whatever
    one operation's requests write is gone before the next, as if the world were made afresh.
    Class-scoped: gone before the lean route's test, which pytest-django runs after these (it
    needs committed data)."""
    world_transaction = transaction.atomic()
    # Marked as Django's TestCase marks its own, so the services' durable blocks (a kept file and
    # its record, ADR 0024) run inside it as they do in every other test.
    world_transaction._from_testcase = True  # type: ignore[attr-defined]
    with django_db_blocker.unblock(), world_transaction:
        made = _world()
        yield made
        transaction.set_rollback(True)


@pytest.fixture
def world(shared_world, db, no_second_factor, keep_connection) -> World:
    lookups.caches_clear()  # nothing a previous operation's requests cached
    return shared_world


class TestEveryOperation:
    @pytest.mark.parametrize("operation", OPERATIONS, ids=_label)
    def test_every_role_gets_an_answer_the_schema_documents(
        self, operation: Any, world: World
    ) -> None:
        every_role_gets_an_answer_the_schema_documents(operation, world)


def every_role_gets_an_answer_the_schema_documents(operation: Any, world: World) -> None:
    """At module level: hypothesis derives its derandomized seed from `run`'s source, indentation
    included, so the requests stay the ones this test has always sent."""
    TALLY.operations.add(_label(operation))

    send = lambda case, **kw: case.call(**kw)  # noqa: E731
    well_formed = _well_formed(operation, world)
    if well_formed is not None:
        _send_as_everyone(world, well_formed, send)

    @SETTINGS
    @given(case=_cases(operation, world))
    def run(case: Any) -> None:
        _send_as_everyone(world, case, send)

    run()


lean = schemathesis.openapi.from_dict(schema.raw_schema)
lean.app = application


@pytest.fixture
def committed_world(transactional_db, no_second_factor) -> World:
    """The lean route's scan threads read with connections of their own: the world committed.
    (schemathesis ends the application's lifespan with the test, which closes those threads.)"""
    return _world()


def test_the_lean_scan_route_answers_within_the_schema(committed_world: World) -> None:
    operation = lean["/api/entry/scan"]["POST"]

    _send_as_everyone(
        committed_world,
        _well_formed(operation, committed_world),
        lambda case, **kw: case.call(**kw),
    )

    @SETTINGS
    @given(case=_cases(operation, committed_world))
    def run(case: Any) -> None:
        _send_as_everyone(committed_world, case, lambda case, **kw: case.call(**kw))

    run()
