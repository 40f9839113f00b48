"""Offline scans uploaded by scanners: stored as they happened, reconciled first-scan-wins by time
scanned, a ticket admitted twice raised as a conflict (docs/adr/0006-offline-scanners.md)."""

import uuid
from datetime import datetime, timedelta

import pytest
from django.test import Client
from django.utils import timezone

from safeground import clock
from safeground.accounts.models import Device, Organisation
from safeground.accounts.services import device_create, device_revoke
from safeground.append_only import AppendOnlyError
from safeground.bans.models import Ban
from safeground.entry.models import EntryConflict, Scan, Ticket, TicketFlag
from safeground.entry.runtime import lookups
from safeground.entry.selectors import entry_counts
from safeground.live.events import Audience, capture_events
from safeground.matches.models import Fixture
from tests.entry.conftest import flag

pytestmark = pytest.mark.django_db


def scan(
    barcode: str,
    at: datetime,
    turnstile: str = "F03",
    decision: str = "admit",
    reason: str | None = None,
    **fields,
) -> dict:
    return {
        "barcode": barcode,
        "turnstile": turnstile,
        "scanned_at": at.isoformat(),
        "nonce": str(uuid.uuid4()),
        "direction": "in",
        "decision": decision,
        "reason": reason,
    } | fields


def upload(key: str, *scans: dict, body: object = None):
    return Client().post(
        "/api/entry/offline-scans",
        {"scans": list(scans)} if body is None else body,
        content_type="application/json",
        headers={"X-Device-Key": key},
    )


@pytest.fixture
def second_key(gates) -> str:
    _, key = device_create(
        organisation=Organisation.objects.get(name="West Ham United"),
        name="Handheld 7",
        profile="scanner",
    )
    return key


def test_an_offline_admission_of_a_fresh_ticket_admits_it(gates) -> None:
    at = gates.before_kickoff
    sent = scan("AWAY-1", at)
    response = upload(gates.key, sent)
    assert response.status_code == 200
    assert response.json() == {
        "results": [
            {"nonce": sent["nonce"], "decision": "admit", "reason": None, "conflict": False,
             "replayed": False}
        ]
    }  # fmt: skip
    ticket = Ticket.objects.get(barcode="AWAY-1")
    assert ticket.inside and ticket.entered_at == at and ticket.entered_gate.code == "F"
    stored = Scan.objects.get()
    assert (stored.offline, stored.decision, stored.reason, stored.ticket) == (
        True, "admit", "", ticket,
    )  # fmt: skip
    assert (stored.fixture, stored.turnstile.code, stored.scanned_at) == (gates.fixture, "F03", at)
    assert stored.stored_at > at
    # Online, the ticket is now inside: the turnstile says where and when it came in.
    later = gates.scan("AWAY-1", "F05", at=at + timedelta(minutes=5)).json()
    assert later["reason"] == "already_inside"
    assert f"Gate F (away) at {timezone.localtime(at):%H:%M}" in later["message"]


@pytest.mark.parametrize("earlier_uploaded", ["first", "second"])
def test_two_scanners_admitting_the_same_ticket_offline_leave_one_admission_and_a_conflict(
    gates, second_key, earlier_uploaded, django_capture_on_commit_callbacks
) -> None:
    t1 = gates.before_kickoff
    earlier = scan("AWAY-1", t1, "F03")
    later = scan("AWAY-1", t1 + timedelta(minutes=2), "F07")
    uploads = [(gates.key, earlier), (second_key, later)]
    if earlier_uploaded == "second":
        uploads.reverse()
    with capture_events() as events, django_capture_on_commit_callbacks(execute=True):
        first_answer = upload(*uploads[0]).json()["results"][0]
        second_answer = upload(*uploads[1]).json()["results"][0]
        assert events == []  # nothing leaves before the transaction commits
    assert (first_answer["conflict"], second_answer["conflict"]) == (False, True)
    assert first_answer["decision"] == second_answer["decision"] == "admit"

    ticket = Ticket.objects.get(barcode="AWAY-1")
    assert ticket.inside and ticket.entered_at == t1  # the earlier admission stands
    conflict = EntryConflict.objects.get()
    assert (conflict.fixture, conflict.ticket) == (gates.fixture, ticket)
    assert (conflict.first_scan.nonce, conflict.second_scan.nonce) == (
        uuid.UUID(earlier["nonce"]),
        uuid.UUID(later["nonce"]),
    )
    assert Scan.objects.filter(decision="admit", offline=True).count() == 2

    conflicts = [e for e in events if e.type == "entry.conflict"]
    assert len(conflicts) == 1
    event = conflicts[0]
    assert event.audience.home_only is True and event.audience.zone_ids is None
    assert event.data["id"] == conflict.pk
    assert event.data["ticket"] == {"block": "S-L2", "row": "C", "seat": "12", "area": "",
                                    "end": "away"}  # fmt: skip
    assert event.data["first"] == {"gate": "Gate F (away)", "turnstile": "F03",
                                   "scanned_at": clock.iso(t1), "offline": True}  # fmt: skip
    assert event.data["second"]["turnstile"] == "F07"
    assert "Holder" not in event.frame and "AWAY-1" not in event.frame


def test_an_earlier_offline_admission_stands_over_a_later_online_one(
    gates, second_key, django_capture_on_commit_callbacks
) -> None:
    t1 = gates.before_kickoff
    assert gates.scan("AWAY-1", "F05", at=t1 + timedelta(minutes=10)).json()["decision"] == "admit"
    with capture_events() as events, django_capture_on_commit_callbacks(execute=True):
        result = upload(second_key, scan("AWAY-1", t1, "F09")).json()["results"][0]
    assert result["conflict"] is True
    assert Ticket.objects.get(barcode="AWAY-1").entered_at == t1
    conflict = EntryConflict.objects.get()
    assert (conflict.first_scan.offline, conflict.second_scan.offline) == (True, False)
    assert [e.data["second"] for e in events if e.type == "entry.conflict"] == [
        {"gate": "Gate F (away)", "turnstile": "F05",
         "scanned_at": clock.iso(t1 + timedelta(minutes=10)), "offline": False}
    ]  # fmt: skip


def test_a_third_admission_earlier_than_both_takes_the_stand(gates, second_key) -> None:
    t1 = gates.before_kickoff
    upload(gates.key, scan("AWAY-1", t1, "F03"))
    upload(second_key, scan("AWAY-1", t1 + timedelta(minutes=1), "F07"))
    upload(second_key, scan("AWAY-1", t1 - timedelta(minutes=1), "F08"))
    assert Ticket.objects.get(barcode="AWAY-1").entered_at == t1 - timedelta(minutes=1)
    pairs = list(
        EntryConflict.objects.order_by("pk").values_list(
            "first_scan__turnstile__code", "second_scan__turnstile__code"
        )
    )
    assert pairs == [("F03", "F07"), ("F08", "F03")]
    counts = entry_counts(gates.fixture)
    assert counts["admitted"] == 1 and counts["conflicts"]["total"] == 2


def test_a_replayed_nonce_stores_nothing_and_answers_as_before(gates, second_key) -> None:
    t1 = gates.before_kickoff
    upload(gates.key, scan("AWAY-1", t1))
    late = scan("AWAY-1", t1 + timedelta(minutes=3), "F07")
    deny = scan("BANNED-1", t1, "F07", decision="deny", reason="banned")
    first = upload(second_key, late, deny).json()["results"]
    again = upload(second_key, late, deny).json()["results"]
    assert [r["replayed"] for r in first] == [False, False]
    assert [r["replayed"] for r in again] == [True, True]
    assert [(r["decision"], r["reason"], r["conflict"]) for r in again] == [
        ("admit", None, True),
        ("deny", "banned", False),
    ]
    assert Scan.objects.count() == 3 and EntryConflict.objects.count() == 1
    # The same nonce twice in one upload is stored once too.
    twice = scan("AWAY-2", t1, "F07")
    assert [r["replayed"] for r in upload(second_key, twice, twice).json()["results"]] == [
        False,
        True,
    ]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"barcode": "has space"}, "scans[1].barcode"),
        ({"barcode": None}, "scans[1].barcode"),
        ({"turnstile": "Z99"}, "scans[1].turnstile"),
        ({"scanned_at": "2016-10-26T18:55:00"}, "scans[1].scanned_at"),
        ({"scanned_at": "future"}, "scans[1].scanned_at"),
        ({"nonce": "not-a-uuid"}, "scans[1].nonce"),
        ({"direction": "sideways"}, "scans[1].direction"),
        ({"decision": "maybe"}, "scans[1].decision"),
        ({"decision": "admit", "reason": "banned"}, "scans[1].reason"),
        ({"decision": "deny", "reason": None}, "scans[1].reason"),
        ({"decision": "deny", "reason": "looks_shifty"}, "scans[1].reason"),
    ],
)
def test_a_bad_scan_refuses_the_whole_upload_naming_it(gates, change, field) -> None:
    good = scan("AWAY-1", gates.before_kickoff)
    bad = scan("AWAY-2", gates.before_kickoff) | change
    if bad["scanned_at"] == "future":
        bad["scanned_at"] = (timezone.now() + timedelta(hours=2)).isoformat()
    response = upload(gates.key, good, bad)
    # Well formed but naming no turnstile there (404), or refused by the clock (409).
    wanted = 404 if "turnstile" in change else 409 if change.get("scanned_at") == "future" else 400
    assert response.status_code == wanted
    assert response.json()["field"] == field and response.json()["detail"]
    assert not Scan.objects.exists()
    assert not Ticket.objects.filter(inside=True).exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "scans"),
        ({"scans": []}, "scans"),
        ({"scans": "AWAY-1"}, "scans"),
        ({"scans": [17]}, "scans[0]"),
        ([], "scans"),
    ],
)
def test_an_upload_that_is_not_a_list_of_scans_is_a_400(gates, body, field) -> None:
    response = upload(gates.key, body=body)
    assert response.status_code == 400 and response.json()["field"] == field


def test_an_upload_holds_at_most_500_scans(gates) -> None:
    scans = [scan(f"X-{n}", gates.before_kickoff, decision="deny", reason="unknown_ticket")
             for n in range(501)]  # fmt: skip
    response = upload(gates.key, *scans)
    assert response.status_code == 400 and "1 to 500" in response.json()["detail"]
    assert upload(gates.key, *scans[:500]).status_code == 200
    assert Scan.objects.count() == 500


def test_counts_count_the_ticket_once_and_report_the_conflict(gates, second_key) -> None:
    t1 = gates.before_kickoff
    upload(gates.key, scan("AWAY-1", t1, "F03"), scan("AWAY-2", t1, "F03"))
    upload(second_key, scan("AWAY-1", t1 + timedelta(minutes=4), "F07"))
    counts = entry_counts(gates.fixture)
    assert counts["admitted"] == Ticket.objects.filter(inside=True).count() == 2
    assert {g["code"]: g["admitted"] for g in counts["gates"]}["F"] == 2
    assert next(z for z in counts["zones"] if z["code"] == "away-se-cup")["admitted"] == 2
    assert counts["denied"]["total"] == 0
    assert counts["conflicts"]["total"] == 1
    (listed,) = counts["conflicts"]["list"]
    assert listed["ticket"]["block"] == "S-L2"
    assert (listed["first"]["turnstile"], listed["second"]["turnstile"]) == ("F03", "F07")


def test_offline_denials_are_stored_and_a_banned_one_reaches_the_control_room(
    gates, django_capture_on_commit_callbacks
) -> None:
    t1 = gates.before_kickoff
    gates.scan("AWAY-1", at=t1)
    with capture_events() as events, django_capture_on_commit_callbacks(execute=True):
        results = upload(
            gates.key,
            scan("BANNED-1", t1, decision="deny", reason="banned"),
            scan("AWAY-1", t1 + timedelta(minutes=1), decision="deny", reason="already_inside"),
            scan("NOPE-9", t1, decision="deny", reason="unknown_ticket"),
        ).json()["results"]
    assert [r["conflict"] for r in results] == [False, False, False]
    stored = list(Scan.objects.filter(offline=True).values_list("reason", "ticket__barcode"))
    assert stored == [
        ("banned", "BANNED-1"),
        ("already_inside", "AWAY-1"),
        ("unknown_ticket", None),
    ]
    assert not EntryConflict.objects.exists()
    assert Ticket.objects.get(barcode="AWAY-1").entered_at == t1  # unchanged
    denied = [e for e in events if e.type == "entry.denied"]
    assert len(denied) == 1 and denied[0].audience.home_only
    assert denied[0].data["offline"] is True and denied[0].data["flag"]
    assert denied[0].data["scanned_at"] == clock.iso(t1)  # the ground's clock (issue 36)
    counts = entry_counts(gates.fixture)
    assert counts["denied"]["by_reason"]["banned"] == 1 and counts["prevented"] == 1


def test_an_offline_admission_of_a_holder_banned_since_the_bundle_alerts_the_control_room(
    gates, django_capture_on_commit_callbacks
) -> None:
    """The scanner's bundle was made before the ban was confirmed, so it let the holder in."""
    t1 = gates.before_kickoff
    banned_since = flag(Ticket.objects.get(barcode="AWAY-2"), TicketFlag.Status.CONFIRMED)
    flag(Ticket.objects.get(barcode="AWAY-1"), TicketFlag.Status.OPEN)  # open: not banned yet
    with capture_events() as events, django_capture_on_commit_callbacks(execute=True):
        results = upload(
            gates.key,
            scan("AWAY-1", t1),
            scan("AWAY-2", t1 + timedelta(minutes=1), "F07"),
            scan("AWAY-2", t1 + timedelta(minutes=40), direction="out"),  # an exit: no alert
        ).json()["results"]
        assert events == []  # nothing leaves before the transaction commits
    assert [r["decision"] for r in results] == ["admit", "admit", "admit"]
    assert Ticket.objects.get(barcode="AWAY-2").inside  # stored as the admission it was
    alerts = [e for e in events if e.type == "entry.banned_admitted"]
    assert len(alerts) == 1
    assert alerts[0].audience == Audience(home_only=True)
    assert alerts[0].data == {
        "gate": "Gate F (away)",
        "turnstile": "F07",
        "scanned_at": clock.iso(t1 + timedelta(minutes=1)),
        "ticket": {"block": "S-L3", "row": "C", "seat": "12", "area": "", "end": "away"},
        "flag": banned_since.pk,
        "offline": True,
    }
    assert "Holder" not in alerts[0].frame and "AWAY-2" not in alerts[0].frame
    assert not [e for e in events if e.type == "entry.denied"]

    # The same upload again (a lost answer): replayed, and no second alert.
    with capture_events() as again, django_capture_on_commit_callbacks(execute=True):
        upload(gates.key, body={"scans": [scan("AWAY-2", t1) | {"nonce": results[1]["nonce"]}]})
    assert [e.type for e in again if e.type == "entry.banned_admitted"] == []


def test_a_ban_that_ended_before_the_match_day_raises_no_alert(
    gates, django_capture_on_commit_callbacks
) -> None:
    banned_once = flag(Ticket.objects.get(barcode="AWAY-2"), TicketFlag.Status.CONFIRMED)
    Ban.objects.filter(pk=banned_once.ban_id).update(
        is_life=False,
        starts_on=gates.fixture.kickoff.date() - timedelta(days=400),
        ends_on=gates.fixture.kickoff.date() - timedelta(days=1),
    )
    with capture_events() as events, django_capture_on_commit_callbacks(execute=True):
        assert upload(gates.key, scan("AWAY-2", gates.before_kickoff)).status_code == 200
    assert [e.type for e in events if e.type == "entry.banned_admitted"] == []


@pytest.mark.parametrize(("reentry", "inside_after"), [(False, True), (True, False)])
def test_an_offline_exit_follows_the_matchs_reentry_rule(gates, reentry, inside_after) -> None:
    Fixture.objects.filter(pk=gates.fixture.pk).update(reentry=reentry)
    lookups.caches_clear()
    t1 = gates.before_kickoff
    upload(
        gates.key, scan("AWAY-1", t1), scan("AWAY-1", t1 + timedelta(minutes=30), direction="out")
    )
    assert Ticket.objects.get(barcode="AWAY-1").inside is inside_after
    assert list(Scan.objects.values_list("direction", flat=True)) == ["in", "out"]


def test_a_revoked_or_unprofiled_device_may_not_upload(gates, monkeypatch) -> None:
    from safeground.accounts import devices

    monkeypatch.setitem(devices.PROFILES, "turnstile", frozenset({"entry_scan"}))
    response = upload(gates.key, scan("AWAY-1", gates.before_kickoff))
    assert response.status_code == 403
    assert "may not call entry_offline_scans" in response.json()["detail"]
    monkeypatch.undo()
    device_revoke(device=Device.objects.get(pk=gates.device_id))
    lookups.caches_clear()
    assert upload(gates.key, scan("AWAY-1", gates.before_kickoff)).status_code == 401
    assert not Scan.objects.exists()


def test_a_conflict_is_never_changed_or_deleted(gates, second_key) -> None:
    upload(gates.key, scan("AWAY-1", gates.before_kickoff))
    upload(second_key, scan("AWAY-1", gates.before_kickoff + timedelta(minutes=1), "F07"))
    conflict = EntryConflict.objects.get()
    with pytest.raises(AppendOnlyError):
        conflict.save()
    with pytest.raises(AppendOnlyError):
        conflict.delete()
    with pytest.raises(AppendOnlyError):
        EntryConflict.objects.update(raised_at=timezone.now())
    from django.db import DatabaseError, connection, transaction

    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM entry_entryconflict")  # the database refuses too
    assert EntryConflict.objects.count() == 1


def test_an_upload_costs_a_bounded_number_of_queries(gates, django_assert_max_num_queries) -> None:
    t1 = gates.before_kickoff
    upload(gates.key, scan("AWAY-1", t1))  # warms the device and turnstile caches
    scans = [scan(b, t1) for b in ("AWAY-2", "HOME-1")] + [
        scan(f"X-{n}", t1, decision="deny", reason="unknown_ticket") for n in range(20)
    ]
    # priors, tickets, lock, then an insert per scan and an update per admission (+ savepoints)
    with django_assert_max_num_queries(5 + len(scans) + 2 + 2):
        assert upload(gates.key, *scans).status_code == 200
