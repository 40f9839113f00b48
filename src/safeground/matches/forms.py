"""The safety officer's fixture form: rendering only; fixture_fields checks what is typed, as it
does for the command line, a season file and the API."""

from typing import Any, cast

from django import forms
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from safeground.accounts.models import Organisation
from safeground.venues.models import Ground

from .fixture_fields import FixtureFields, fixture_fields_check
from .models import Fixture


class FixtureForm(forms.Form):
    opponent = forms.CharField(required=False, label=_("Opponent"))
    competition = forms.CharField(required=False, label=_("Competition"))
    stage = forms.CharField(required=False, label=_("Stage (optional)"))
    kickoff = forms.CharField(
        required=False,
        label=_("Kick-off (local time)"),
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
    )
    layout = forms.ChoiceField(required=False, label=_("Zone layout"))
    away_allocation = forms.CharField(required=False, label=_("Away allocation (tickets)"))
    shared_with = forms.MultipleChoiceField(
        required=False, label=_("Shared with"), widget=forms.CheckboxSelectMultiple
    )

    def __init__(self, *args: Any, ground: Ground, keep_zones: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ground = ground
        self.keep_zones = keep_zones
        self.checked: FixtureFields | None = None
        blank = _("Keep the zones as they are") if keep_zones else _("Choose a layout")
        cast(forms.ChoiceField, self.fields["layout"]).choices = [("", blank)] + [
            (layout.code, layout.name) for layout in ground.layouts.all()
        ]
        cast(forms.ChoiceField, self.fields["shared_with"]).choices = [
            (org.slug, f"{org.name} ({org.get_kind_display()})")
            for org in Organisation.objects.exclude(pk=ground.organisation_id)
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors:
            return data
        self.checked, problems = fixture_fields_check(
            ground=self.ground, data=data, keep_zones=self.keep_zones
        )
        for field, message in problems:
            self.add_error(field if field in self.fields else None, message)
        return data


def fixture_initial(fixture: Fixture) -> dict[str, Any]:
    """The form as the fixture stands, for editing."""
    return {
        "opponent": fixture.away_club.name,
        "competition": fixture.competition.name,
        "stage": fixture.stage,
        "kickoff": timezone.localtime(fixture.kickoff).strftime("%Y-%m-%dT%H:%M"),
        "layout": fixture.layout.code if fixture.layout else "",
        "away_allocation": str(fixture.away_allocation),
        "shared_with": [share.organisation.slug for share in fixture.shares.all()],
    }
