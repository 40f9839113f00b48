from django.contrib import admin

from .models import Fixture


@admin.register(Fixture)
class FixtureAdmin(admin.ModelAdmin):
    """Where a match's own rules are set (re-entry at the gates); the zone layout and who works
    the match come from fixture_create."""

    list_display = ["__str__", "competition", "kickoff", "ground", "reentry"]
    list_filter = ["ground", "competition", "reentry"]
    fields = ["ground", "home_club", "away_club", "competition", "stage", "kickoff",
              "away_allocation", "reentry"]  # fmt: skip
