from django.db import migrations


def install_triggers(apps, schema_editor):
    from safeground.incidents.db import install_append_only_triggers

    install_append_only_triggers(schema_editor.connection)


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
        migrations.RunPython(install_triggers, migrations.RunPython.noop),
        migrations.RunPython(seed_categories, migrations.RunPython.noop),
    ]
