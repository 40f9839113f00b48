"""Forms of the casework pages: they parse; the services decide."""

from django import forms

from safeground.bans.models import Ban
from safeground.bans.selectors import MAX_REASON

from .models import Evidence, Outcome, Subject
from .who import MAX_ROWS

DATES = ["%Y-%m-%d", "%d/%m/%Y"]
TIMES = ["%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M", "%d/%m/%Y %H:%M"]


class OpenCaseForm(forms.Form):
    entries = forms.TypedMultipleChoiceField(coerce=int, label="Log entries")
    title = forms.CharField(max_length=200)
    summary = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)

    def __init__(self, *args: object, entries: list, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["entries"].choices = [(e.pk, f"#{e.seq}") for e in entries]  # type: ignore[attr-defined]


class WhoAreaForm(forms.Form):
    """The area of a look-up; narrow unless widened: the entries' own rows, no adjacent block."""

    rows = forms.IntegerField(
        min_value=0, max_value=MAX_ROWS, initial=0, required=False, label="Rows either side"
    )
    adjacent = forms.BooleanField(required=False, initial=False, label="Include adjacent blocks")

    def clean_rows(self) -> int:
        return self.cleaned_data["rows"] or 0


class WhoForm(WhoAreaForm):
    """The names of a look-up, a page at a time: the reason, and a wider search asked again."""

    rows = forms.IntegerField(min_value=0, max_value=MAX_ROWS, widget=forms.HiddenInput)
    adjacent = forms.BooleanField(required=False, widget=forms.HiddenInput)
    page = forms.IntegerField(min_value=1, initial=1, widget=forms.HiddenInput)
    widen = forms.BooleanField(required=False, label="Yes, I need the wider search")
    reason = forms.CharField(
        label="Why do you need the names?",
        max_length=MAX_REASON,
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
        help_text="Recorded with your name and the time; the auditor can see it.",
    )

    def clean(self) -> dict:
        data = super().clean() or {}
        if (data.get("rows") or data.get("adjacent")) and not data.get("widen"):
            self.add_error(
                "widen", "the search is wider than the entries' own rows: confirm you need it"
            )
        return data


class SubjectForm(forms.Form):
    kind = forms.ChoiceField(choices=Subject.Kind.choices)
    ticket = forms.IntegerField(required=False, widget=forms.HiddenInput)
    person = forms.IntegerField(required=False, label="Register person #")
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)


class OutcomeForm(forms.Form):
    kind = forms.ChoiceField(
        choices=[c for c in Outcome.Kind.choices if c[0] != Outcome.Kind.CLUB_BAN]
    )
    subject = forms.IntegerField(required=False)
    offence = forms.CharField(max_length=200, required=False)
    home_office_offence = forms.CharField(max_length=20, required=False)
    club = forms.CharField(max_length=10, required=False)
    force = forms.CharField(max_length=200, required=False)
    reference = forms.CharField(max_length=100, required=False)
    note = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)


class ArrestForm(forms.Form):
    """An arrest from its log entry: what for, whose supporter, the police's reference."""

    home_office_offence = forms.ChoiceField(
        label="Offence group (Home Office)", choices=Outcome.HomeOfficeOffence.choices
    )
    club = forms.ChoiceField(
        label="Arrested person's club",
        choices=Outcome.Club.choices,
        initial=Outcome.Club.NOT_KNOWN,
        widget=forms.RadioSelect,
    )
    reference = forms.CharField(
        label="Police reference", max_length=100, help_text="The custody or crime reference."
    )
    force = forms.CharField(label="Arresting force", max_length=200, required=False)
    note = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)


class BanForm(forms.Form):
    subject = forms.IntegerField()
    scope = forms.ChoiceField(choices=Ban.Scope.choices, initial=Ban.Scope.CLUB)
    starts_on = forms.DateField(input_formats=DATES)
    is_life = forms.BooleanField(label="Life ban", required=False)
    ends_on = forms.DateField(input_formats=DATES, required=False)
    grounds = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), max_length=4000)


class EvidenceForm(forms.Form):
    kind = forms.ChoiceField(choices=Evidence.Kind.choices)
    file = forms.FileField(required=False)
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)
    entry = forms.IntegerField(required=False)
    subject = forms.IntegerField(required=False)
    camera = forms.CharField(max_length=100, required=False)
    footage_from = forms.DateTimeField(input_formats=TIMES, required=False)
    footage_to = forms.DateTimeField(input_formats=TIMES, required=False)


class CloseForm(forms.Form):
    reason = forms.CharField(max_length=4000)
