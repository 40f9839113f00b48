from django.db import migrations

from safeground.append_only import AppendOnlyTriggers


class Migration(migrations.Migration):
    """The records of who read a supporter's contact or exported a phone's data: append-only in
    the database too."""

    dependencies = [("supporters", "0001_initial")]

    operations = [AppendOnlyTriggers("supporters_supporteraccess")]
