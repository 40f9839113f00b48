"""The ban officer's decision on a flagged ticket."""

from django import forms


class FlagDecisionForm(forms.Form):
    decision = forms.ChoiceField(choices=[("confirm", "Confirm"), ("clear", "Clear")])
    note = forms.CharField(max_length=4000)
