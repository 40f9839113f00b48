import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("alerts", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="pushsubscription",
            name="saved_at",
            field=models.DateTimeField(auto_now=True, default=django.utils.timezone.now),
            preserve_default=False,
        ),
    ]
