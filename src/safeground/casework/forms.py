"""Forms of the casework pages: they parse; the services decide."""

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from safeground.bans.models import Ban
from safeground.bans.selectors import MAX_REASON

from .models import Evidence, Outcome, Subject
from .who import MAX_ROWS

DATES = ["%Y-%m-%d", "%d/%m/%Y"]
TIMES = ["%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M", "%d/%m/%Y %H:%M"]


class OpenCaseForm(forms.Form):
    entries = forms.TypedMultipleChoiceField(coerce=int, label=_("Log entries"))
    title = forms.CharField(label=_("Title"), max_length=200)
    summary = forms.CharField(
        label=_("Summary"), widget=forms.Textarea(attrs={"rows": 2}), required=False
    )

    def __init__(self, *args: object, entries: list, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["entries"].choices = [(e.pk, f"#{e.seq}") for e in entries]  # type: ignore[attr-defined]


class WhoAreaForm(forms.Form):
    """The area of a look-up; narrow unless widened: the entries' own rows, no adjacent block."""

    rows = forms.IntegerField(
        min_value=0, max_value=MAX_ROWS, initial=0, required=False, label=_("Rows either side")
    )
    adjacent = forms.BooleanField(required=False, initial=False, label=_("Include adjacent blocks"))

    def clean_rows(self) -> int:
        return self.cleaned_data["rows"] or 0


class WhoForm(WhoAreaForm):
    """The names of a look-up, a page at a time: the reason, and a wider search asked again."""

    rows = forms.IntegerField(min_value=0, max_value=MAX_ROWS, widget=forms.HiddenInput)
    adjacent = forms.BooleanField(required=False, widget=forms.HiddenInput)
    page = forms.IntegerField(min_value=1, initial=1, widget=forms.HiddenInput)
    widen = forms.BooleanField(required=False, label=_("Yes, I need the wider search"))
    reason = forms.CharField(
        label=_("Why do you need the names?"),
        max_length=MAX_REASON,
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
        help_text=_("Recorded with your name and the time; the auditor can see it."),
    )

    def clean(self) -> dict:
        data = super().clean() or {}
        if (data.get("rows") or data.get("adjacent")) and not data.get("widen"):
            self.add_error(
                "widen", _("the search is wider than the entries' own rows: confirm you need it")
            )
        return data


class SubjectForm(forms.Form):
    kind = forms.ChoiceField(label=_("Kind"), choices=Subject.Kind.choices)
    ticket = forms.IntegerField(required=False, widget=forms.HiddenInput)
    person = forms.IntegerField(required=False, label=_("Register person #"))
    description = forms.CharField(
        label=_("Description"), widget=forms.Textarea(attrs={"rows": 2}), required=False
    )


class OutcomeForm(forms.Form):
    kind = forms.ChoiceField(
        label=_("Kind"), choices=[c for c in Outcome.Kind.choices if c[0] != Outcome.Kind.CLUB_BAN]
    )
    subject = forms.IntegerField(label=_("Subject"), required=False)
    offence = forms.CharField(label=_("Offence"), max_length=200, required=False)
    home_office_offence = forms.CharField(
        label=_("Home office offence"), max_length=20, required=False
    )
    club = forms.CharField(label=_("Club"), max_length=10, required=False)
    force = forms.CharField(label=_("Force"), max_length=200, required=False)
    reference = forms.CharField(label=_("Reference"), max_length=100, required=False)
    note = forms.CharField(
        label=_("Note"), widget=forms.Textarea(attrs={"rows": 2}), required=False
    )


class ArrestForm(forms.Form):
    """An arrest from its log entry: what for, whose supporter, the police's reference."""

    home_office_offence = forms.ChoiceField(
        label=_("Offence group (Home Office)"), choices=Outcome.HomeOfficeOffence.choices
    )
    club = forms.ChoiceField(
        label=_("Arrested person's club"),
        choices=Outcome.Club.choices,
        initial=Outcome.Club.NOT_KNOWN,
        widget=forms.RadioSelect,
    )
    reference = forms.CharField(
        label=_("Police reference"), max_length=100, help_text=_("The custody or crime reference.")
    )
    force = forms.CharField(label=_("Arresting force"), max_length=200, required=False)
    note = forms.CharField(
        label=_("Note"), widget=forms.Textarea(attrs={"rows": 2}), required=False
    )
    another = forms.BooleanField(
        label=_("Record another arrest from this entry"),
        required=False,
        help_text=_("An arrest is already recorded from it: tick only if this is a second person."),
    )

    def __init__(self, *args: Any, already: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.already = already
        if not already:
            del self.fields["another"]  # asked only when an arrest is already recorded

    def particulars(self) -> dict[str, Any]:
        """The arrest's fields, as arrest_record takes them."""
        return {k: v for k, v in self.cleaned_data.items() if k != "another"}


class BanForm(forms.Form):
    subject = forms.IntegerField(label=_("Subject"))
    scope = forms.ChoiceField(label=_("Scope"), choices=Ban.Scope.choices, initial=Ban.Scope.CLUB)
    starts_on = forms.DateField(label=_("Starts on"), input_formats=DATES)
    is_life = forms.BooleanField(label=_("Life ban"), required=False)
    ends_on = forms.DateField(label=_("Ends on"), input_formats=DATES, required=False)
    grounds = forms.CharField(
        label=_("Grounds"), widget=forms.Textarea(attrs={"rows": 3}), max_length=4000
    )


class EvidenceForm(forms.Form):
    kind = forms.ChoiceField(label=_("Kind"), choices=Evidence.Kind.choices)
    file = forms.FileField(label=_("File"), required=False)
    description = forms.CharField(
        label=_("Description"), widget=forms.Textarea(attrs={"rows": 2}), required=False
    )
    entry = forms.IntegerField(label=_("Entry"), required=False)
    subject = forms.IntegerField(label=_("Subject"), required=False)
    camera = forms.CharField(label=_("Camera"), max_length=100, required=False)
    footage_from = forms.DateTimeField(label=_("Footage from"), input_formats=TIMES, required=False)
    footage_to = forms.DateTimeField(label=_("Footage to"), input_formats=TIMES, required=False)


class CloseForm(forms.Form):
    reason = forms.CharField(label=_("Reason"), max_length=4000)
