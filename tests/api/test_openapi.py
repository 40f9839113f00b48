"""The OpenAPI schema names each response shape once: ninja files schemas under their class
name, so two classes of one name in two apps made one overwrite the other."""

import ninja

from safeground.api import api
from safeground.entry.api import ScanOut


def _schemas(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        if sub.__module__.startswith("safeground."):
            found.add(sub)
        found |= _schemas(sub)
    return found


def test_no_two_api_schemas_share_a_name() -> None:
    api.get_openapi_schema()  # every router's schemas imported
    names: dict[str, list[str]] = {}
    for schema in _schemas(ninja.Schema):
        names.setdefault(schema.__name__, []).append(schema.__module__)
    assert {name: mods for name, mods in names.items() if len(mods) > 1} == {}


def test_the_scan_answer_is_documented_as_the_scan_route_answers() -> None:
    # Found by the schema fuzzing: the reports' scan rows, also named ScanOut, were documented
    # as the turnstile's answer (id, gate, stored_at... instead of decision, reason, message).
    schema = api.get_openapi_schema()
    answer = schema["paths"]["/api/entry/scan"]["post"]["responses"][200]
    ref = answer["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    documented = schema["components"]["schemas"][ref]["properties"]
    assert set(documented) == set(ScanOut.model_fields)
