from django.db import migrations

from safeground.append_only import AppendOnlyTriggers


class Migration(migrations.Migration):
    """A case's history, subjects, outcomes, evidence and chain of custody are append-only in the
    database too: a file is never replaced, only added to."""

    dependencies = [("casework", "0001_initial")]

    operations = [
        AppendOnlyTriggers("casework_caseevent"),
        AppendOnlyTriggers("casework_subject"),
        AppendOnlyTriggers("casework_outcome"),
        AppendOnlyTriggers("casework_evidence"),
        AppendOnlyTriggers("casework_custodyrecord"),
    ]
