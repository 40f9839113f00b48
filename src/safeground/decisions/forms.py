"""The decision log's forms: a decision (or its amendment), a review, the radio switch, a major
incident's M/ETHANE report (or its correction)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from safeground.matches.models import Fixture

from .parts import KEYS, METHANE_KEYS, METHANE_MAX, METHANE_PARTS, PARTS
from .selectors import commanders
from .services import DecisionParts

WHEN = forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M")


def _area(label: Any, help_text: Any = "", required: bool = False) -> forms.CharField:
    return forms.CharField(
        label=label,
        help_text=help_text,
        required=required,
        widget=forms.Textarea(attrs={"rows": 2}),
        max_length=4000,
    )


class CommanderField(forms.ModelChoiceField):
    def label_from_instance(self, obj: Any) -> str:
        return str(obj)


class PlainForm(forms.Form):
    """Labels without a trailing colon (the page's other forms have none)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)


class DecisionPartsForm(PlainForm):
    """A field for each of the decision's parts, from the table (decisions.parts)."""


# Declared after the class, so a form built on it has them as if written in its body.
DecisionPartsForm.declared_fields.update(
    {part.key: _area(part.label, part.help, part.required) for part in PARTS}
)


class DecisionForm(DecisionPartsForm):
    decision_maker = CommanderField(queryset=None, label=_("Decision-maker (commander)"))
    decided_at = forms.DateTimeField(
        label=_("Time decided"), required=False, widget=WHEN, help_text=_("empty: now")
    )
    review_at = forms.DateTimeField(label=_("Review at"), required=False, widget=WHEN)
    links = forms.CharField(
        label=_("Linked log entries"),
        required=False,
        max_length=200,
        help_text=_("entry numbers, e.g. 12, 15"),
    )
    retrospective_reason = _area(
        _("Why logged late (retrospective)"), _("needed when logged over 5 minutes after")
    )
    home_only = forms.BooleanField(label=_("Home club's staff only"), required=False)
    kickoff_delay = forms.IntegerField(
        label=_("Put the kick-off back by (minutes)"),
        required=False,
        min_value=0,
        max_value=180,
        help_text=_("only for a decision to delay the kick-off; 0: back to the planned time"),
    )

    field_order = [
        "decision_maker",
        "decided_at",
        *KEYS,
        "kickoff_delay",
        "review_at",
        "links",
        "retrospective_reason",
        "home_only",
    ]

    def __init__(self, *args: Any, fixture: Fixture, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        people = commanders(fixture)
        field = self.fields["decision_maker"]
        assert isinstance(field, forms.ModelChoiceField)
        from safeground.accounts.models import User

        field.queryset = User.objects.filter(pk__in=[u.pk for u in people]).order_by(
            "first_name", "last_name", "pk"
        )

    def clean_links(self) -> tuple[int, ...]:
        text = self.cleaned_data.get("links", "").replace("#", " ").replace(",", " ")
        try:
            return tuple(int(part) for part in text.split())
        except ValueError:
            raise forms.ValidationError(_("entry numbers, separated by commas")) from None

    def parts(self) -> DecisionParts:
        data = self.cleaned_data
        texts: dict[str, Any] = {key: data[key] for key in KEYS}
        return DecisionParts(
            **texts,
            review_at=data["review_at"],
            links=data["links"],
            home_only=data["home_only"],
            kickoff_delay=data["kickoff_delay"],
        )


class AmendForm(DecisionForm):
    reason = _area(_("Why it is amended"), required=True)

    field_order = ["reason", *DecisionForm.field_order]


class ReviewForm(PlainForm):
    note = _area(_("What the review found"), required=True)
    next_review_at = forms.DateTimeField(label=_("Next review at"), required=False, widget=WHEN)


class RadioForm(PlainForm):
    decision_maker = CommanderField(queryset=None, label=_("Decided by"))
    note = forms.CharField(label=_("What happened"), required=False, max_length=500)

    def __init__(self, *args: Any, fixture: Fixture, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "radio-%s")
        super().__init__(*args, **kwargs)
        from safeground.accounts.models import User

        field = self.fields["decision_maker"]
        assert isinstance(field, forms.ModelChoiceField)
        field.queryset = User.objects.filter(pk__in=[u.pk for u in commanders(fixture)])
        field.empty_label = None  # a commander is always named: no blank choice to pick by mistake


class MethaneForm(PlainForm):
    """The seven parts of M/ETHANE, one line each, in order; the first said for the commander
    (declaring it is why the form is open), the exact location offered from the ground's places."""

    def __init__(self, *args: Any, places: list[str], **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "methane-%s")
        super().__init__(*args, **kwargs)
        for p in METHANE_PARTS:
            attrs = {"class": "methane-input", "autocomplete": "off"}
            if p.key == "exact_location" and places:
                attrs["list"] = "methane-places"
            self.fields[p.key] = forms.CharField(
                label=f"{p.letter} · {p.label}",
                help_text=p.help,
                required=p.required,
                max_length=METHANE_MAX,
                widget=forms.TextInput(attrs=attrs),
            )
        self.fields["major_incident"].initial = _("Yes: major incident declared")
        self.places = places
        self.order_fields([*METHANE_KEYS, "reason"])

    def parts(self) -> dict[str, str]:
        return {key: self.cleaned_data[key] for key in METHANE_KEYS}


class MethaneCorrectForm(MethaneForm):
    reason = forms.CharField(
        label=_("Why it is corrected"),
        max_length=METHANE_MAX,
        widget=forms.TextInput(attrs={"class": "methane-input"}),
    )
