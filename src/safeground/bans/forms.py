"""Forms of the register's pages: they parse; the services decide."""

from django import forms

from .models import AccessRecord, Ban
from .selectors import MAX_REASON


class ReasonForm(forms.Form):
    reason = forms.CharField(
        label="Why do you need this record?",
        max_length=MAX_REASON,
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
        help_text="Recorded with your name and the time; the auditor can see it.",
    )


class SubjectAccessForm(forms.Form):
    reason = forms.CharField(
        label="Why are you exporting everything held about this person?",
        max_length=MAX_REASON,
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
        help_text="A subject-access request's reference, for example. Recorded and shown to the "
        "auditor.",
    )


class ProposeForm(forms.Form):
    first_names = forms.CharField(max_length=100)
    last_name = forms.CharField(max_length=100)
    date_of_birth = forms.DateField(
        input_formats=["%Y-%m-%d", "%d/%m/%Y"], help_text="yyyy-mm-dd or dd/mm/yyyy"
    )
    supporter_number = forms.CharField(max_length=40, required=False)
    type = forms.ChoiceField(choices=Ban.Type.choices)
    scope = forms.ChoiceField(choices=Ban.Scope.choices, initial=Ban.Scope.CLUB)
    issued_by = forms.CharField(
        max_length=200, required=False, help_text="the court, for a banning order"
    )
    starts_on = forms.DateField(input_formats=["%Y-%m-%d", "%d/%m/%Y"])
    ends_on = forms.DateField(input_formats=["%Y-%m-%d", "%d/%m/%Y"], required=False)
    is_life = forms.BooleanField(label="Life ban", required=False)
    grounds = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), max_length=4000)
    reporting_conditions = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}), required=False, max_length=4000
    )
    control_periods = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}), required=False, max_length=4000
    )


class DecisionForm(forms.Form):
    decision = forms.ChoiceField(choices=[("approve", "Approve"), ("reject", "Reject")])
    reason = forms.CharField(max_length=4000)


class AppealForm(forms.Form):
    reason = forms.CharField(max_length=4000, label="The appeal, as received")


class AppealDecisionForm(forms.Form):
    outcome = forms.ChoiceField(choices=[("upheld", "Uphold"), ("revoked", "Revoke")])
    reason = forms.CharField(max_length=4000)


class AccessSearchForm(forms.Form):
    username = forms.CharField(required=False, max_length=150)
    action = forms.ChoiceField(required=False, choices=[("", "any"), *AccessRecord.Action.choices])
    person = forms.IntegerField(required=False, min_value=1, label="Person #")
    since = forms.DateField(required=False, input_formats=["%Y-%m-%d", "%d/%m/%Y"])
    until = forms.DateField(required=False, input_formats=["%Y-%m-%d", "%d/%m/%Y"])
