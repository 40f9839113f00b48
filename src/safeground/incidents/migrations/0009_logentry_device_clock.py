# The device's own clock beside the corrected time observed (ADR 0026).

from django.db import migrations, models

from safeground.append_only import AppendOnlyTriggers

LOG = AppendOnlyTriggers("incidents_logentry")


def triggers_install(apps, schema_editor):
    # SQLite's trigger names the columns it guards: made again, it guards the new ones too.
    LOG.install(schema_editor.connection)


def triggers_drop(apps, schema_editor):
    # SQLite will not drop a column a trigger names: the triggers go first, and come back after.
    LOG.drop(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [
        ("incidents", "0008_logentry_decision_kinds"),
    ]

    operations = [
        migrations.RunPython(migrations.RunPython.noop, triggers_install),
        migrations.AddField(
            model_name="logentry",
            name="device_observed_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="logentry",
            name="device_sent_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(triggers_install, triggers_drop),
    ]
