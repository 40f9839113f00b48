from django.db import migrations


class Migration(migrations.Migration):
    """Ticket flags are entry's now (entry.TicketFlag, migration entry 0007): out of the register's
    state only; the table `bans_ticketflag` stays as it is."""

    dependencies = [("bans", "0003_steps_and_access_records_append_only")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="TicketFlag")],
            database_operations=[],
        )
    ]
