from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("incidents", "0010_kept_log_counts"),
    ]

    operations = [
        migrations.AlterField(
            model_name="logentry",
            name="kind",
            field=models.CharField(
                choices=[
                    ("report", "Report"),
                    ("assignment", "Assignment"),
                    ("escalation", "Escalation"),
                    ("status", "Status change"),
                    ("correction", "Correction"),
                    ("task", "Task update"),
                    ("warning", "Flashpoint warning"),
                    ("broadcast", "Broadcast sent"),
                    ("post", "Steward posted"),
                    ("photo", "Photo kept"),
                    ("decision", "Decision logged"),
                    ("decision_review", "Decision reviewed"),
                    ("major_incident", "Major incident (M/ETHANE)"),
                ],
                max_length=20,
            ),
        ),
    ]
