"""No model's choice label is English-only: each field's choices are said in the reader's
language (gettext_lazy), so a form, a page or an export in Welsh names them in Welsh. The
exceptions are listed with their reason."""

from django.apps import apps
from django.utils.functional import Promise

# Labels kept in English on purpose (the catalogue has them; the readers' pages translate them).
ENGLISH = {
    # A broadcast without words of its own stores its script's label as its text.
    ("incidents", "broadcast", "script"),
    # A refusal's label is stored and counted in English (entry/rules.py); the scanner and the
    # reports say it in the reader's language from the rules.
    ("entry", "scan", "reason"),
    # The kept counts take the scans' own reasons (ADR 0022).
    ("entry", "scancount", "reason"),
}


def labels() -> list[tuple[tuple[str, str, str], object]]:
    found = []
    for model in apps.get_app_configs():
        if not model.name.startswith("safeground."):
            continue
        for each in model.get_models():
            for field in each._meta.get_fields():
                for _value, label in getattr(field, "flatchoices", None) or []:
                    found.append(((each._meta.app_label, each._meta.model_name, field.name), label))
    return found


def test_every_choice_label_goes_through_the_translation_machinery() -> None:
    found = labels()
    assert len(found) > 100  # the models' choices were read
    english = sorted(
        f"{'.'.join(where)}: {label!r}"
        for where, label in found
        if not isinstance(label, Promise) and where not in ENGLISH
    )
    assert english == []


def test_the_exceptions_are_still_english_choices() -> None:
    """An exception that no longer holds is taken off the list, not left to excuse another."""
    found = {where for where, label in labels() if not isinstance(label, Promise)}
    assert found >= ENGLISH
