"""The OpenAPI schema names each response shape once: ninja files schemas under their class
name, so two classes of one name in two apps made one overwrite the other."""

import re

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


def _nodes(node):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _nodes(value)
    elif isinstance(node, list):
        for value in node:
            yield from _nodes(value)


def test_every_string_says_no_nul_and_every_integer_what_a_column_holds() -> None:
    # Found by the schema fuzzing: the server refuses a NUL anywhere and an id past 2^63 - 1,
    # while the schema promised any string and any whole number.
    schema = api.get_openapi_schema()
    strings = [n for n in _nodes(schema) if n.get("type") == "string"]
    free = [n for n in strings if not {"format", "enum", "const"} & set(n)]
    with_nul = [n for n in free if "pattern" not in n or re.search(n["pattern"], "F03\x00A")]
    assert free and not with_nul, with_nul[:3]
    integers = [n for n in _nodes(schema) if n.get("type") == "integer"]
    assert integers and all(n["maximum"] <= 2**63 - 1 for n in integers)


def test_a_report_states_its_place_and_an_offline_refusal_its_reason() -> None:
    schema = api.get_openapi_schema()
    entry = schema["components"]["schemas"]["EntryIn"]
    assert {tuple(alt["required"]) for alt in entry["anyOf"]} == {
        ("block",),
        ("zone",),
        ("gate",),
        ("concourse",),
        ("outside",),
    }
    offline = schema["paths"]["/api/entry/offline-scans"]["post"]["requestBody"]
    body = offline["content"]["application/json"]["schema"]
    kinds = body["properties"]["scans"]["items"]["discriminator"]["mapping"]
    deny = schema["components"]["schemas"][kinds["deny"].rsplit("/", 1)[-1]]
    assert "reason" in deny["required"] and "null" not in str(deny["properties"]["reason"])
