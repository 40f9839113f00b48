import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    """Ticket flags move from the register to entry (bans migration 0004): into entry's state
    only, on the table they already have (`bans_ticketflag`, its index and constraint unchanged)."""

    dependencies = [
        ("entry", "0006_scans_append_only"),
        ("bans", "0004_ticketflag_to_entry"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="TicketFlag",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("score", models.FloatField()),
                        ("reasons", models.JSONField(default=list)),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("open", "Awaiting review"),
                                    ("confirmed", "Confirmed: deny entry"),
                                    ("cleared", "Cleared: not the banned person"),
                                ],
                                default="open",
                                max_length=10,
                            ),
                        ),
                        ("flagged_at", models.DateTimeField()),
                        ("decided_at", models.DateTimeField(blank=True, null=True)),
                        ("decision_note", models.TextField(blank=True)),
                        (
                            "ban",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="flags",
                                to="bans.ban",
                            ),
                        ),
                        (
                            "decided_by",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "ticket",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="flags",
                                to="entry.ticket",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "bans_ticketflag",
                        "ordering": ["-score", "pk"],
                        "indexes": [
                            models.Index(fields=["status"], name="bans_ticket_status_9208ac_idx")
                        ],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("ticket", "ban"), name="ticketflag_unique"
                            )
                        ],
                    },
                )
            ],
            database_operations=[],
        )
    ]
