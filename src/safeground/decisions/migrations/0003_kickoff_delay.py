from django.db import migrations, models

from safeground.append_only import AppendOnlyTriggers


class Migration(migrations.Migration):
    dependencies = [
        ("decisions", "0002_part_labels"),
    ]

    operations = [
        migrations.AddField(
            model_name="decision",
            name="kickoff_delay",
            field=models.PositiveSmallIntegerField(blank=True, null=True),
        ),
        # Again: SQLite rebuilds the table to add a column, and its trigger names every column.
        AppendOnlyTriggers("decisions_decision"),
    ]
