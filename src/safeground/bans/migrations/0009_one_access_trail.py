from django.db import migrations, models

from safeground.append_only import AppendOnlyTriggers


class Migration(migrations.Migration):
    """One access trail (ADR 0020): a subject in words, and the supporters' actions."""

    dependencies = [
        ("bans", "0008_league_ban"),
    ]

    operations = [
        migrations.AddField(
            model_name="accessrecord",
            name="subject",
            field=models.CharField(blank=True, db_default="", default="", max_length=100),
        ),
        migrations.AlterField(
            model_name="accessrecord",
            name="action",
            field=models.CharField(
                choices=[
                    ("read", "Read a person's record"),
                    ("search", "Searched the register"),
                    ("review_flag", "Reviewed a flagged ticket"),
                    ("propose", "Proposed a ban"),
                    ("approve", "Approved a ban"),
                    ("reject", "Rejected a proposed ban"),
                    ("appeal", "Recorded an appeal"),
                    ("decide_appeal", "Decided an appeal"),
                    ("activate", "Ban came into force"),
                    ("expire", "Ban expired"),
                    ("confirm_flag", "Confirmed a flagged ticket"),
                    ("clear_flag", "Cleared a flagged ticket"),
                    ("erase", "Erased a person (retention)"),
                    ("identify", "Looked up who sat near an incident"),
                    ("identify_large", "Looked up who sat near an incident: a large search"),
                    ("list_flags", "Listed flagged tickets (holders' names)"),
                    ("subject_access", "Exported everything held about a person"),
                    ("league_publish", "Published bans to the league's exchange (tokens only)"),
                    ("read_contact", "Read a supporter's contact details"),
                    ("read_photo", "Opened a supporter's photo"),
                    ("subject_access_phone", "Exported everything held about a phone number"),
                ],
                max_length=20,
            ),
        ),
        # Again, last: SQLite rebuilt the table to add the column, dropping its triggers.
        AppendOnlyTriggers("bans_accessrecord"),
    ]
