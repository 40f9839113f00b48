# Idempotency keys are scoped per author (issue 17): partial unique indexes, no table rebuild.

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("incidents", "0005_checkpoints"),
        ("matches", "0005_match_plan"),
        ("venues", "0003_green_guide_capacity"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="logentry",
            name="logentry_idempotent",
        ),
        migrations.AddConstraint(
            model_name="logentry",
            constraint=models.UniqueConstraint(
                condition=models.Q(("idempotency_key", ""), _negated=True),
                fields=("fixture", "author", "idempotency_key"),
                name="logentry_idempotent_per_author",
            ),
        ),
    ]
