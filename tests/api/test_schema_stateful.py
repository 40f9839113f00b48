"""Schemathesis's stateful runs against /api/openapi.json: sequences of calls linked by what one
answer gives the next (schemathesis infers the links: a fixture made, then its log written, its
entry assigned), positive data only, as the safety officer (a session) and as a turnstile's
device key. Every answer is one the schema documents, and a request the schema calls valid is
never refused as malformed (positive_data_acceptance: a 2xx, or 401/403/404/409/429, never a
400 or 422), whatever names the generated data happen to use.

In process over WSGI inside the test's database, derandomized and bounded as
test_schema_fuzz.py's runs are; SCHEMA_FUZZ_STEPS for a deeper run by hand.
"""

import os
from collections import Counter
from collections.abc import Iterator
from typing import Any

import hypothesis
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.config._checks import PositiveDataAcceptanceConfig
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    positive_data_acceptance,
    response_schema_conformance,
    status_code_conformance,
)

from safeground.asgi import wsgi_app
from tests.api.test_schema_fuzz import ACCEPTED, World, _world, keep_connection  # noqa: F401

STEPS = int(os.environ.get("SCHEMA_FUZZ_STEPS", "10"))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    positive_data_acceptance,
]

schema = schemathesis.openapi.from_wsgi("/api/openapi.json", wsgi_app)
schema.config.generation.update(modes=[GenerationMode.POSITIVE])
schema.config.checks.positive_data_acceptance = PositiveDataAcceptanceConfig(
    expected_statuses=ACCEPTED
)


@pytest.fixture
def world(db, no_second_factor, keep_connection) -> Iterator[World]:  # noqa: F811
    yield _world()


@pytest.mark.parametrize("caller", ["safety", "device"])
def test_linked_calls_get_answers_the_schema_documents(world: World, caller: str) -> None:
    credentials = world.callers[caller]
    statuses: Counter[int] = Counter()

    class Workflow(schema.as_state_machine()):  # type: ignore[misc]
        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return {
                "headers": {**(case.headers or {}), **credentials["headers"]},
                "cookies": credentials["cookies"],
            }

        def validate_response(self, response: Any, case: Any, **kwargs: Any) -> None:
            statuses[response.status_code] += 1
            case.validate_response(response, checks=CHECKS, headers=kwargs.get("headers"))

    Workflow.run(
        settings=hypothesis.settings(
            max_examples=STEPS,
            stateful_step_count=6,
            derandomize=True,
            database=None,
            deadline=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
    )
    print(f"\nstateful as {caller}: statuses {dict(sorted(statuses.items()))}")
    # The runs reached the services, not only the door: some calls got past who may ask.
    assert sum(n for status, n in statuses.items() if status not in (401, 403)) > 0
