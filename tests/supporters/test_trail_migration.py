"""The supporters' own access records move into the one trail (ADR 0020) with the organisation
whose data they were, and a phone's old texts find the ground whose line sent them."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from safeground.bans.models import AccessRecord
from safeground.supporters.models import SupporterReport, TextMessage
from safeground.supporters.services import Sender, report_receive

pytestmark = pytest.mark.django_db(transaction=True)
BEFORE = [("supporters", "0006_dealt_with_told")]


def test_the_old_records_move_into_the_trail_with_their_organisation(tonight) -> None:
    report = report_receive(
        fixture=tonight.fixture,
        sender=Sender("sms", "+447700900001"),
        block=tonight.block("S-L2"),
        category="medical",
        contact="07700 900123",
    )
    report = SupporterReport.objects.get(pk=report.pk)
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    access = old.get_model("supporters", "SupporterAccess")
    now = timezone.now()
    access.objects.create(
        at=now, user_id=tonight.cast["loggist"].pk, action="read_contact", report_id=report.pk,
        reason="triage of item 1",
    )  # fmt: skip
    access.objects.create(
        at=now, user_id=tonight.cast["banofficer"].pk, action="subject_access", reason="SAR"
    )
    old.get_model("supporters", "TextMessage").objects.create(
        reporter_id=report.reporter_id, to="+447700900001", body="Thank you", sent_at=now
    )

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    moved = AccessRecord.objects.filter(detail__startswith="moved from").order_by("pk")
    assert [(r.username, r.action, r.subject, r.reason) for r in moved] == [
        ("loggist", "read_contact", f"report {report.reference}", "triage of item 1"),
        ("banofficer", "subject_access_phone", "a phone number", "SAR"),
    ]
    assert [r.organisation_id for r in moved] == [tonight.cast.home.pk, None]
    assert TextMessage.objects.get().ground_id == tonight.fixture.ground_id
    assert AccessRecord.triggers().installed(connection)
    assert "supporters_supporteraccess" not in connection.introspection.table_names()
