"""Proposing, approving and appealing bans; every read and change leaves an access record."""

from datetime import date

import pytest
from django.core.exceptions import PermissionDenied

from safeground.append_only import AppendOnlyError
from safeground.bans.models import AccessRecord, Ban, BanStep
from safeground.bans.selectors import person_read, register_search
from safeground.bans.services import (
    BanError,
    ban_appeal,
    ban_appeal_decide,
    ban_approve,
    ban_reject,
    bans_roll_forward,
)

from .conftest import propose, user

pytestmark = pytest.mark.django_db
DOB = date(1990, 1, 2)


def test_a_proposal_does_nothing_until_another_user_approves(home) -> None:
    ban = propose(home, "Ellis", "Vantwick", DOB)
    assert ban.status == Ban.Status.PROPOSED
    with pytest.raises(BanError, match="the proposer may not approve their own ban"):
        ban_approve(ban=ban, by=user("banofficer"), reason="I am sure")
    assert Ban.objects.get(pk=ban.pk).status == Ban.Status.PROPOSED
    ban = ban_approve(ban=ban, by=user("safety"), reason="CCTV reviewed")
    assert ban.status == Ban.Status.ACTIVE  # its start date has come
    assert ban.approved_by == user("safety")
    steps = list(ban.steps.values_list("action", "by_name"))
    assert steps == [("proposed", "banofficer"), ("approved", "safety"), ("activated", "safety")]


def test_a_second_ban_officer_may_approve_but_not_the_same_one(home) -> None:
    ban = propose(home, "Ellis", "Vantwick", DOB, by=user("security"))
    with pytest.raises(BanError):
        ban_approve(ban=ban, by=user("security"), reason="mine")
    assert ban_approve(ban=ban, by=user("banofficer"), reason="agreed").status == "active"


def test_the_proposer_may_not_reject_their_own_proposal_either(home) -> None:
    ban = propose(home, "Ellis", "Vantwick", DOB)
    with pytest.raises(BanError):
        ban_reject(ban=ban, by=user("banofficer"), reason="changed my mind")
    assert ban_reject(ban=ban, by=user("safety"), reason="not enough evidence").ended_on


def test_an_appeal_is_decided_by_a_third_user(home) -> None:
    ban = propose(home, "Ellis", "Vantwick", DOB)
    ban_approve(ban=ban, by=user("safety"), reason="CCTV reviewed")
    ban = ban_appeal(ban=ban, by=user("banofficer"), reason="Letter from the supporter")
    assert ban.status == Ban.Status.APPEALED
    for who in ("banofficer", "safety"):  # the proposer and the approver
        with pytest.raises(BanError, match="neither proposed nor approved"):
            ban_appeal_decide(ban=ban, by=user(who), outcome="revoked", reason="appeal heard")
    ban = ban_appeal_decide(ban=ban, by=user("security"), outcome="upheld", reason="footage clear")
    assert ban.status == Ban.Status.UPHELD and ban.appeal_decided_by == user("security")
    with pytest.raises(BanError, match="it must be under appeal"):
        ban_appeal_decide(ban=ban, by=user("security"), outcome="revoked", reason="again")


def test_a_revoked_ban_ends_and_a_bad_outcome_is_refused(home) -> None:
    ban = propose(home, "Ellis", "Vantwick", DOB)
    ban_approve(ban=ban, by=user("safety"), reason="ok")
    ban_appeal(ban=ban, by=user("banofficer"), reason="appeal")
    with pytest.raises(BanError, match="outcome"):
        ban_appeal_decide(ban=ban, by=user("security"), outcome="maybe", reason="hm")
    ban = ban_appeal_decide(
        ban=ban,
        by=user("security"),
        outcome="revoked",
        reason="wrong person",
        today=date(2017, 1, 1),
    )
    assert (ban.status, ban.ended_on) == ("revoked", date(2017, 1, 1))


def test_bad_proposals_name_the_field(home) -> None:
    cases = [
        ({"first_names": " "}, "first_names"),
        ({"date_of_birth": date(2999, 1, 1)}, "date_of_birth"),
        ({"ends_on": date(2015, 1, 1)}, "ends_on"),
        ({"is_life": True}, "ends_on"),
        ({"ends_on": None}, "ends_on"),
        ({"type": "banning_order"}, "reporting_conditions"),
        ({"grounds": ""}, "grounds"),
        ({"scope": "galaxy"}, "scope"),
    ]
    before = Ban.objects.count()
    for fields, field in cases:
        with pytest.raises(BanError) as refused:
            propose(home, "Ellis", "Vantwick", DOB, **fields)
        assert refused.value.field == field
    assert Ban.objects.count() == before


def test_the_same_person_is_found_again_under_a_spelling_of_their_name(home) -> None:
    first = propose(home, "Seán", "O'Varley", DOB)
    second = propose(home, "sean", "OVARLEY", DOB)
    assert first.person_id == second.person_id


def test_every_read_and_every_change_leaves_an_access_record(home) -> None:
    officer, safety = user("banofficer"), user("safety")
    ban = propose(home, "Ellis", "Vantwick", DOB)
    ban_approve(ban=ban, by=safety, reason="CCTV reviewed")
    with pytest.raises(BanError, match="reason"):
        person_read(user=officer, person_id=ban.person_id, reason="")
    person_read(user=officer, person_id=ban.person_id, reason="Checking before the cup tie")
    person_read(user=safety, person_id=ban.person_id, reason="Reviewing the approval")
    register_search(user=officer, query="vantwick", reason="Steward's report names a Vantwick")
    records = AccessRecord.objects.filter(person=ban.person).order_by("pk")
    assert [(r.username, r.action, r.reason) for r in records] == [
        ("banofficer", "propose", "Threw a bottle towards the away section."),
        ("safety", "approve", "CCTV reviewed"),
        ("safety", "activate", "approved; start date reached"),
        ("banofficer", "read", "Checking before the cup tie"),
        ("safety", "read", "Reviewing the approval"),
    ]
    search = AccessRecord.objects.filter(action="search").get()
    assert search.detail == f"query 'vantwick': 1 listed (people #{ban.person_id})"
    assert search.reason == "Steward's report names a Vantwick"


def test_those_outside_the_register_may_not_read_a_person(home) -> None:
    ban = propose(home, "Ellis", "Vantwick", DOB)
    for who in ("steward", "police", "spotter", "auditor", "liaison", "loggist"):
        with pytest.raises(PermissionDenied):
            person_read(user=user(who), person_id=ban.person_id, reason="curious about this")
    assert not AccessRecord.objects.filter(action="read").exists()


def test_history_and_access_records_are_append_only(home) -> None:
    ban = propose(home, "Ellis", "Vantwick", DOB)
    with pytest.raises(AppendOnlyError):
        BanStep.objects.filter(ban=ban).update(reason="rewritten")
    with pytest.raises(AppendOnlyError):
        AccessRecord.objects.all().delete()
    record = AccessRecord.objects.first()
    assert record is not None
    record.reason = "rewritten"
    with pytest.raises(AppendOnlyError):
        record.save()


def test_bans_start_and_expire_by_date(home) -> None:
    ban = propose(
        home, "Ellis", "Vantwick", DOB, starts_on=date(2099, 1, 1), ends_on=date(2100, 1, 1)
    )
    assert ban_approve(ban=ban, by=user("safety"), reason="ok").status == "approved"
    rolled = bans_roll_forward(today=date(2099, 1, 1))
    assert rolled.activated == 1
    rolled = bans_roll_forward(today=date(2100, 1, 2))
    ban.refresh_from_db()
    assert (ban.status, ban.ended_on) == ("expired", date(2100, 1, 1))
    assert rolled.expired >= 1
