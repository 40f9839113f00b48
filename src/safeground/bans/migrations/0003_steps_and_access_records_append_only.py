from django.db import migrations

from safeground.append_only import AppendOnlyTriggers


class Migration(migrations.Migration):
    """Ban steps and access records append-only in the database too; retention may only erase a
    step's reason."""

    dependencies = [("bans", "0002_initial")]

    operations = [
        AppendOnlyTriggers("bans_banstep", erasable=("reason",)),
        AppendOnlyTriggers("bans_accessrecord"),
    ]
