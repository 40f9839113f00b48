from django.db import migrations

from safeground.append_only import AppendOnlyTriggers


def seed_categories(apps, schema_editor):
    from safeground.incidents.categories import SEED

    Category = apps.get_model("incidents", "Category")
    for position, (code, name, offence, severity) in enumerate(SEED):
        Category.objects.get_or_create(
            code=code,
            defaults={
                "name": name,
                "offence": offence,
                "default_severity": severity,
                "position": position,
            },
        )


class Migration(migrations.Migration):
    dependencies = [("incidents", "0001_initial")]

    operations = [
        AppendOnlyTriggers("incidents_logentry"),
        migrations.RunPython(seed_categories, migrations.RunPython.noop),
    ]
