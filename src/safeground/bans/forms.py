"""Forms of the register's pages: they parse; the services decide."""

from django import forms
from django.utils.translation import gettext_lazy as _

from .models import AccessRecord, Ban
from .selectors import MAX_REASON


class ReasonForm(forms.Form):
    reason = forms.CharField(
        label=_("Why do you need this record?"),
        max_length=MAX_REASON,
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
        help_text=_("Recorded with your name and the time; the auditor can see it."),
    )


class SubjectAccessForm(forms.Form):
    reason = forms.CharField(
        label=_("Why are you exporting everything held about this person?"),
        max_length=MAX_REASON,
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
        help_text=_(
            "A subject-access request's reference, for example. Recorded and shown to the auditor."
        ),
    )


class ProposeForm(forms.Form):
    first_names = forms.CharField(label=_("First names"), max_length=100)
    last_name = forms.CharField(label=_("Last name"), max_length=100)
    date_of_birth = forms.DateField(
        label=_("Date of birth"),
        input_formats=["%Y-%m-%d", "%d/%m/%Y"],
        help_text=_("yyyy-mm-dd or dd/mm/yyyy"),
    )
    supporter_number = forms.CharField(label=_("Supporter number"), max_length=40, required=False)
    type = forms.ChoiceField(label=_("Type"), choices=Ban.Type.choices)
    scope = forms.ChoiceField(label=_("Scope"), choices=Ban.Scope.choices, initial=Ban.Scope.CLUB)
    issued_by = forms.CharField(
        label=_("Issued by"),
        max_length=200,
        required=False,
        help_text=_("the court, for a banning order"),
    )
    starts_on = forms.DateField(label=_("Starts on"), input_formats=["%Y-%m-%d", "%d/%m/%Y"])
    ends_on = forms.DateField(
        label=_("Ends on"), input_formats=["%Y-%m-%d", "%d/%m/%Y"], required=False
    )
    is_life = forms.BooleanField(label=_("Life ban"), required=False)
    grounds = forms.CharField(
        label=_("Grounds"), widget=forms.Textarea(attrs={"rows": 3}), max_length=4000
    )
    reporting_conditions = forms.CharField(
        label=_("Reporting conditions"),
        widget=forms.Textarea(attrs={"rows": 2}),
        required=False,
        max_length=4000,
    )
    control_periods = forms.CharField(
        label=_("Control periods"),
        widget=forms.Textarea(attrs={"rows": 2}),
        required=False,
        max_length=4000,
    )


class DecisionForm(forms.Form):
    decision = forms.ChoiceField(
        label=_("Decision"), choices=[("approve", _("Approve")), ("reject", _("Reject"))]
    )
    reason = forms.CharField(label=_("Reason"), max_length=4000)


class AppealForm(forms.Form):
    reason = forms.CharField(max_length=4000, label=_("The appeal, as received"))


class AppealDecisionForm(forms.Form):
    outcome = forms.ChoiceField(
        label=_("Outcome"), choices=[("upheld", _("Uphold")), ("revoked", _("Revoke"))]
    )
    reason = forms.CharField(label=_("Reason"), max_length=4000)


class AccessSearchForm(forms.Form):
    username = forms.CharField(label=_("Username"), required=False, max_length=150)
    action = forms.ChoiceField(
        label=_("Action"), required=False, choices=[("", _("any")), *AccessRecord.Action.choices]
    )
    person = forms.IntegerField(required=False, min_value=1, label=_("Person #"))
    subject = forms.CharField(
        label=_("Subject"),
        required=False,
        max_length=100,
        help_text=_("Part of what was read, e.g. a report's reference or a phone's last digits"),
    )
    since = forms.DateField(
        label=_("Since"), required=False, input_formats=["%Y-%m-%d", "%d/%m/%Y"]
    )
    until = forms.DateField(
        label=_("Until"), required=False, input_formats=["%Y-%m-%d", "%d/%m/%Y"]
    )
