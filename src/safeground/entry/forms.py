"""The ban officer's decision on a flagged ticket."""

from django import forms
from django.utils.translation import gettext_lazy as _


class FlagDecisionForm(forms.Form):
    decision = forms.ChoiceField(
        label=_("Decision"), choices=[("confirm", _("Confirm")), ("clear", _("Clear"))]
    )
    note = forms.CharField(label=_("Note"), max_length=4000)
