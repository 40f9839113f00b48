from django.db import migrations

from safeground.append_only import AppendOnlyTriggers


class Migration(migrations.Migration):
    """A scan is evidence: the database refuses to change or delete one, as it does log entries."""

    dependencies = [("entry", "0005_scan_turnstile_gate_unindexed")]

    operations = [AppendOnlyTriggers("entry_scan")]
