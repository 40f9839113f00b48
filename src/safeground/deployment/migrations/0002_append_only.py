from django.db import migrations

from safeground.append_only import AppendOnlyTriggers


class Migration(migrations.Migration):
    """Check-ins, check results and ready marks append-only in the database too."""

    dependencies = [("deployment", "0001_initial")]

    operations = [
        AppendOnlyTriggers("deployment_checkin"),
        AppendOnlyTriggers("deployment_checkresult"),
        AppendOnlyTriggers("deployment_planready"),
    ]
