"""A decision's parts are declared once (decisions.parts, issue 36): the model, the form, the API's
schema, the page, its PDF and the report, the JSON a case bundle carries and the hashed canonical
form all follow the table, with one label per part; and the SHA-256 of a decision logged before
the table is the same after it (the chain of every match already logged still verifies)."""

import io
from dataclasses import fields
from datetime import UTC, datetime

import pytest
from django.db import models
from pypdf import PdfReader

from safeground.decisions.forms import AmendForm, DecisionForm
from safeground.decisions.models import Decision
from safeground.decisions.parts import KEYS, PARTS, english
from safeground.decisions.selectors import decision_json, decision_log
from safeground.decisions.services import (
    DecisionParts,
    decision_fields,
    decision_record,
    digest,
)

pytestmark = pytest.mark.django_db

SAID = DecisionParts(**{key: f"The {key.replace('_', ' ')} of the hold" for key in KEYS})


def test_the_model_has_a_column_per_part_labelled_by_the_table() -> None:
    for part in PARTS:
        column = Decision._meta.get_field(part.key)
        assert isinstance(column, models.TextField)
        assert column.verbose_name == part.label
        assert column.blank is not part.required


def test_the_services_parts_are_the_tables() -> None:
    texts = [f.name for f in fields(DecisionParts) if f.type in ("str", str)]
    assert tuple(texts) == KEYS


def test_the_form_asks_each_part_under_its_label_in_the_tables_order(match_day) -> None:
    for form_class in (DecisionForm, AmendForm):
        form = form_class(fixture=match_day.cup_tie)
        asked = [name for name in form.fields if name in KEYS]
        assert asked == list(KEYS)
        for part in PARTS:
            field = form.fields[part.key]
            assert (field.label, field.help_text, field.required) == (
                part.label,
                part.help,
                part.required,
            )


def test_the_schema_has_each_part_described_by_its_label(client_for, no_second_factor) -> None:
    schema = client_for("loggist").get("/api/openapi.json").json()["components"]["schemas"]
    for name in ("DecisionIn", "AmendIn"):
        properties, required = schema[name]["properties"], schema[name].get("required", [])
        assert [key for key in properties if key in KEYS] == list(KEYS)
        for part in PARTS:
            assert properties[part.key]["description"].startswith(english(part.label))
            assert (part.key in required) is part.required


def test_the_page_pdf_report_and_bundle_say_each_part_under_its_label(
    match_day, client_for, no_second_factor
) -> None:
    cast, cup = match_day.cast, match_day.cup_tie
    decision_record(fixture=cup, loggist=cast["loggist"], decision_maker=cast["police"], parts=SAID)
    client = client_for("safety")
    page = client.get(f"/fixtures/{cup.pk}/decisions/").content.decode()
    report = client.get(f"/fixtures/{cup.pk}/report/").content.decode()
    pdf = client.get(f"/fixtures/{cup.pk}/decisions.pdf").content
    printed = " ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages)
    for part in PARTS[1:]:  # the decision itself is the heading
        label, text = english(part.label), getattr(SAID, part.key)
        assert f"<dt>{label}</dt><dd>{text}</dd>" in page
        assert f"<dt>{label}</dt><dd>{text}</dd>" in report
        assert label in printed and text in printed
    (row,) = decision_log(cast["safety"], cup)
    said = decision_json(row)
    assert {key: said[key] for key in KEYS} == {key: getattr(SAID, key) for key in KEYS}


def test_a_known_decisions_hash_is_the_one_it_was_logged_with() -> None:
    decision = Decision(
        decision="Hold the away end 20 minutes",
        rationale="Home fans on the concourse",
        information="Stewards' reports #1",
        threat_assessment="High: 30 metres apart",
        powers_policy="Ground regulations",
        options_considered="Hold; open the east exits",
        options_rejected="East exits: the routes cross",
        decision_maker_id=7,
        decision_maker_name="Sam Safety",
        decision_maker_role="safety_officer",
        decided_at=datetime(2024, 8, 21, 20, 50, tzinfo=UTC),
        review_at=datetime(2024, 8, 21, 21, 5, tzinfo=UTC),
        links=[3, 5],
        home_only=False,
    )
    # Computed by the code before the table (issue 36): a part renamed or its time written
    # another way changes it, and every decision already chained would fail verification.
    assert digest(decision_fields(decision)) == (
        "04876767e8c0a5fff57ee8f31a2ff58ceb9cb1ecee80fe33501307405760e170"
    )
