import django.db.models.deletion
from django.db import migrations, models

from safeground.append_only import AppendOnlyTriggers

OLD = AppendOnlyTriggers("supporters_supporteraccess")
ACTIONS = {"read_contact": "read_contact", "subject_access": "subject_access_phone"}


def access_to_the_one_trail(apps, schema_editor):
    """Each supporters' access record into the one trail (bans.AccessRecord), with the
    organisation whose data it was: the report's home club's, else its ground's owner. The old
    exports named no phone and no report: their organisation is not known."""
    old = apps.get_model("supporters", "SupporterAccess")
    record = apps.get_model("bans", "AccessRecord")
    moved = []
    for row in old.objects.select_related(
        "user", "report__fixture__home_club", "report__fixture__ground"
    ).order_by("at", "pk"):
        report = row.report
        organisation = None
        if report is not None:
            fixture = report.fixture
            organisation = fixture.home_club.organisation_id or fixture.ground.organisation_id
        moved.append(
            record(
                at=row.at,
                user_id=row.user_id,
                username=row.user.username,
                organisation_id=organisation,
                action=ACTIONS[row.action],
                subject=f"report {report.reference}" if report is not None else "a phone number",
                reason=row.reason,
                detail="moved from the supporters' own access records",
            )
        )
    record.objects.bulk_create(moved, batch_size=500)


def grounds_of_texts(apps, schema_editor):
    """A text's ground where its phone reported at one ground only (texts were answers to the
    phone's reports and messages); a phone heard at two grounds leaves its old texts unplaced."""
    reporter = apps.get_model("supporters", "Reporter")
    report = apps.get_model("supporters", "SupporterReport")
    text = apps.get_model("supporters", "TextMessage")
    grounds: dict[int, set[int]] = {}
    for reporter_id, ground_id in report.objects.values_list("reporter_id", "fixture__ground_id"):
        grounds.setdefault(reporter_id, set()).add(ground_id)
    for reporter_id, found in grounds.items():
        if len(found) == 1:
            (ground_id,) = found
            text.objects.filter(reporter_id=reporter_id, ground=None).update(ground_id=ground_id)
            reporter.objects.filter(pk=reporter_id, awaiting_since__isnull=False).update(
                awaiting_ground_id=ground_id
            )


def drop_old_triggers(apps, schema_editor):
    OLD.drop(schema_editor.connection)


def install_old_triggers(apps, schema_editor):
    OLD.install(schema_editor.connection)


class Migration(migrations.Migration):
    """One access trail (ADR 0020): the supporters' access records move into bans.AccessRecord
    and their model goes; texts and a waiting message keep the ground whose line they were, so a
    phone's export is each club's own."""

    dependencies = [
        ("supporters", "0006_dealt_with_told"),
        ("venues", "0003_green_guide_capacity"),
        ("bans", "0009_one_access_trail"),
    ]

    operations = [
        migrations.AddField(
            model_name="reporter",
            name="awaiting_ground",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="venues.ground",
            ),
        ),
        migrations.AddField(
            model_name="textmessage",
            name="ground",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="venues.ground",
            ),
        ),
        migrations.RunPython(grounds_of_texts, migrations.RunPython.noop),
        migrations.RunPython(access_to_the_one_trail, migrations.RunPython.noop),
        migrations.RunPython(drop_old_triggers, install_old_triggers),
        migrations.DeleteModel(name="SupporterAccess"),
    ]
