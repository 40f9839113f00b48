# The kept counts take the forged reason the reason table gained (ADR 0022, ADR 0025).

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("entry", "0012_kept_counts"),
    ]

    operations = [
        migrations.AlterField(
            model_name="scancount",
            name="reason",
            field=models.CharField(
                blank=True,
                choices=[
                    ("wrong_match", "Ticket for another match"),
                    ("forged", "Forged ticket"),
                    ("unknown_ticket", "Unknown ticket"),
                    ("banned", "Banned"),
                    ("cancelled", "Ticket cancelled"),
                    ("flagged", "Flagged: name close to the banned list"),
                    ("wrong_end", "Wrong end of the ground"),
                    ("already_inside", "Already inside"),
                ],
                max_length=20,
            ),
        ),
    ]
