"""Cases: opened from log entries; subjects; outcomes (an arrest names its category's offence);
a club ban proposed into the register's approval flow, its grounds naming the entries; appeals
decided by another user; the history append-only."""

from datetime import date

import pytest
from django.urls import reverse

from safeground.append_only import AppendOnlyError
from safeground.bans.models import AccessRecord, Ban
from safeground.bans.services import BanError, ban_appeal, ban_appeal_decide, ban_approve
from safeground.casework.models import CaseEvent, Outcome, Subject
from safeground.casework.services import (
    CaseworkError,
    case_ban_propose,
    case_open,
    outcome_record,
    subject_add,
)
from safeground.incidents.models import Category
from safeground.incidents.services import Place
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def holder_case(match_day):
    """A case on a missile entry in S-L2 row D, a ticket holder seated there as its subject."""
    cup = match_day.cup_tie
    entry = factories.report(cup, place=Place(block="S-L2", first_row="D"))
    ticket = factories.ticket(
        cup,
        block="S-L2",
        row="D",
        seat="7",
        holder_name="Casey Quellmoor",
        holder_dob=date(1991, 4, 2),
    )
    case = factories.case(cup, entries=[entry])
    subject = subject_add(
        case=case, by=match_day.cast["banofficer"], kind="ticket_holder", ticket=ticket
    )
    return case, subject


def test_a_case_is_opened_from_entries_of_one_match_only(match_day):
    cup, league = match_day.cup_tie, match_day.league_match
    mine, other = factories.report(cup), factories.report(league)
    with pytest.raises(CaseworkError) as refused:
        case_open(by=match_day.cast["safety"], fixture=cup, entries=[mine, other], title="Coins")
    assert refused.value.field == "entries"
    case = case_open(by=match_day.cast["safety"], fixture=cup, entries=[mine], title="Coins")
    assert list(case.entries.all()) == [mine]
    assert case.organisation_id == cup.ground.organisation_id
    assert case.events.get().action == "opened"


def test_subjects_of_each_kind_and_what_each_needs(match_day):
    case = factories.case(match_day.cup_tie)
    officer = match_day.cast["banofficer"]
    person = factories.person(match_day.cast.home)
    elsewhere = factories.ticket(match_day.league_match, block="N-L1")
    assert subject_add(case=case, by=officer, kind="person", person=person).label == str(person)
    leaflet = subject_add(
        case=case,
        by=officer,
        kind="material",
        description="Leaflet with homophobic slogans, A5, found in S-L2",
    )
    assert leaflet.label.startswith("Leaflet")
    with pytest.raises(CaseworkError) as refused:
        subject_add(case=case, by=officer, kind="ticket_holder", ticket=elsewhere)
    assert refused.value.field == "ticket"
    with pytest.raises(CaseworkError) as refused:
        subject_add(case=case, by=officer, kind="unidentified", description="  ")
    assert refused.value.field == "description"
    other_club = factories.person(match_day.cast.away)
    with pytest.raises(CaseworkError) as refused:
        subject_add(case=case, by=officer, kind="person", person=other_club)
    assert refused.value.field == "person"
    assert case.subjects.count() == 2


def test_an_arrest_names_an_offence_of_the_entries_categories(holder_case, match_day):
    case, subject = holder_case
    police = match_day.cast["police"]
    offence = Category.objects.get(code="missile").offence
    with pytest.raises(CaseworkError) as refused:
        outcome_record(
            case=case,
            by=police,
            kind="arrest",
            subject=subject,
            offence="Criminal Damage Act 1971 s.1",
            force="Met",
            reference="CU/1",
        )
    assert refused.value.field == "offence" and offence in refused.value.message
    with pytest.raises(CaseworkError) as refused:
        outcome_record(
            case=case,
            by=police,
            kind="arrest",
            subject=subject,
            offence=offence,
            force="Metropolitan Police",
            reference="",
        )
    assert refused.value.field == "reference"
    arrest = outcome_record(
        case=case,
        by=police,
        kind="arrest",
        subject=subject,
        offence=offence,
        force="Metropolitan Police",
        reference="CU/2016/114",
    )
    assert (arrest.offence, arrest.reference) == (offence, "CU/2016/114")
    assert offence in case.events.last().detail
    with pytest.raises(CaseworkError):
        outcome_record(case=case, by=police, kind="nfa", note="")
    assert outcome_record(case=case, by=police, kind="nfa", note="CPS: no charge").kind == "nfa"
    with pytest.raises(CaseworkError):
        outcome_record(case=case, by=police, kind="club_ban", subject=subject)


def test_a_club_ban_from_a_case_enters_the_register_awaiting_another_users_approval(
    holder_case, match_day
):
    case, subject = holder_case
    officer, safety = match_day.cast["banofficer"], match_day.cast["safety"]
    outcome = case_ban_propose(
        case=case,
        subject=subject,
        by=officer,
        is_life=True,
        starts_on=date(2024, 1, 1),
        grounds="Threw coins at stewards.",
    )
    ban = outcome.ban
    assert (ban.status, ban.is_life, ban.proposed_by) == (Ban.Status.PROPOSED, True, officer)
    assert (ban.person.full_name, ban.person.date_of_birth) == (
        subject.ticket.holder_name,
        subject.ticket.holder_dob,
    )
    # The grounds point at the case and at each of its entries, by seq and hash.
    for entry in case.entries.all():
        assert f"log entry #{entry.seq}" in ban.grounds and entry.hash in ban.grounds
    assert f"Case #{case.pk}" in ban.grounds
    assert AccessRecord.objects.filter(ban=ban, action="propose", username="banofficer").exists()
    with pytest.raises(BanError):
        ban_approve(ban=ban, by=officer, reason="my own")
    ban = ban_approve(ban=ban, by=safety, reason="CCTV reviewed")
    assert ban.status == Ban.Status.ACTIVE


def test_an_appeal_against_a_case_ban_is_decided_by_a_third_user(holder_case, match_day):
    case, subject = holder_case
    cast = match_day.cast
    ban = case_ban_propose(
        case=case,
        subject=subject,
        by=cast["banofficer"],
        is_life=True,
        starts_on=date(2024, 1, 1),
        grounds="Coins.",
    ).ban
    ban = ban_approve(ban=ban, by=cast["safety"], reason="Proportionate")
    ban = ban_appeal(ban=ban, by=cast["banofficer"], reason="Letter from the supporter")
    for same in ("banofficer", "safety"):
        with pytest.raises(BanError):
            ban_appeal_decide(ban=ban, by=cast[same], outcome="revoked", reason="Mine")
    ban = ban_appeal_decide(ban=ban, by=cast["security"], outcome="upheld", reason="Heard")
    assert ban.status == Ban.Status.UPHELD


def test_a_ban_needs_a_named_person(match_day):
    case = factories.case(match_day.cup_tie)
    unknown = subject_add(
        case=case,
        by=match_day.cast["banofficer"],
        kind="unidentified",
        description="Man in a grey hooded top, S-L2 row D",
    )
    with pytest.raises(CaseworkError) as refused:
        case_ban_propose(
            case=case,
            subject=unknown,
            by=match_day.cast["banofficer"],
            is_life=True,
            starts_on=date(2024, 1, 1),
            grounds="Coins.",
        )
    assert refused.value.field == "subject"
    assert not Outcome.objects.filter(case=case).exists()


def test_the_case_history_subjects_and_outcomes_are_append_only(holder_case, match_day):
    case, subject = holder_case
    event = case.events.first()
    event.detail = "rewritten"
    with pytest.raises(AppendOnlyError):
        event.save()
    with pytest.raises(AppendOnlyError):
        CaseEvent.objects.filter(case=case).update(detail="rewritten")
    with pytest.raises(AppendOnlyError):
        Subject.objects.filter(pk=subject.pk).delete()


def test_the_registers_page_links_a_case_bans_grounds_to_the_case_and_its_entries(
    holder_case, match_day, client_for, no_second_factor
):
    case, subject = holder_case
    ban = case_ban_propose(
        case=case, subject=subject, by=match_day.cast["banofficer"], is_life=True,
        starts_on=date(2024, 1, 1), grounds="Coins.",
    ).ban  # fmt: skip
    other = factories.ban(match_day.cast.home)  # proposed in the register, not from a case
    client = client_for("safety")
    for person in (ban.person, other.person):
        client.post(reverse("person", args=[person.pk]), {"reason": "Checking the grounds"})
    page = client.get(reverse("person", args=[ban.person.pk])).text
    sources = page.split("data-grounds-sources>")[1].split("</dd>")[0]
    assert reverse("case", args=[case.pk]) in sources
    for entry in case.entries.all():
        assert f"log entry #{entry.seq} (hash {entry.hash[:12]}" in sources
    assert "data-grounds-sources" not in client.get(reverse("person", args=[other.person.pk])).text
