"""Steward posts, task updates, broadcasts and photos: the services and their events."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from safeground.accounts.models import User
from safeground.incidents.broadcasting import broadcast_ack, broadcast_send
from safeground.incidents.models import BroadcastAck, LogEntry, Photo
from safeground.incidents.photos import log_entry_photo_add
from safeground.incidents.posts import steward_post_assign
from safeground.incidents.selectors import incident_state, post_zone_ids, steward_post
from safeground.incidents.services import (
    LogEntryError,
    Place,
    log_entry_append,
    log_entry_assign,
    log_entry_task,
)
from safeground.live.events import capture_events
from safeground.venues.models import Zone

pytestmark = pytest.mark.django_db


def user(name: str) -> User:
    return User.objects.get(username=name)


def post(fixture, name: str, **place):
    return steward_post_assign(
        fixture=fixture, steward=user(name), assigned_by=user("safety"), **place
    )


def test_a_new_post_replaces_the_old_and_covers_the_zones_of_a_concourse(match_day) -> None:
    cup_tie = match_day.cup_tie
    post(cup_tie, "steward", zone="away-south-cup")
    latest = post(cup_tie, "steward", concourse="S-L")
    assert steward_post(cup_tie, user("steward")) == latest
    codes = set(
        Zone.objects.filter(pk__in=post_zone_ids(cup_tie, latest)).values_list("code", flat=True)
    )
    # the cup's zones in the South Stand, which the concourse serves; not the North Stand's
    assert codes == {"away-south-cup", "buffer-south-cup"}


@pytest.mark.parametrize(
    ("place", "field"),
    [
        ({"zone": "nowhere"}, "zone"),
        ({}, "post"),
        ({"zone": "away-south-cup", "gate": "F"}, "post"),
    ],
)
def test_a_bad_post_names_what_is_wrong(match_day, place, field) -> None:
    cup_tie = match_day.cup_tie
    with pytest.raises(LogEntryError) as refused:
        post(cup_tie, "steward", **place)
    assert refused.value.field == field


def test_only_stewards_of_the_home_club_are_posted(match_day) -> None:
    cup_tie = match_day.cup_tie
    with pytest.raises(LogEntryError, match="police is not a steward"):
        post(cup_tie, "police", zone="away-south-cup")


def test_the_assignee_accepts_then_finishes_a_task(match_day) -> None:
    cup_tie = match_day.cup_tie
    report = log_entry_append(
        fixture=cup_tie,
        author=user("loggist"),
        category="medical",
        text="Fan fainted",
        place=Place(block="S-L1"),
    )
    with pytest.raises(LogEntryError, match="not assigned to you"):
        log_entry_task(entry=report, author=user("steward"), task="accepted")
    log_entry_assign(entry=report, author=user("loggist"), assignee=user("steward"))
    with pytest.raises(LogEntryError, match="not assigned to you"):
        log_entry_task(entry=report, author=user("supervisor"), task="accepted")
    log_entry_task(entry=report, author=user("steward"), task="accepted")
    assert incident_state(report).task == "accepted"
    log_entry_task(entry=report, author=user("steward"), task="done")
    state = incident_state(report)
    assert (state.task, state.assignee_username, state.status) == ("done", "steward", "assigned")


def test_a_zone_broadcast_goes_to_the_stewards_posted_there_and_acks_once(
    match_day, django_capture_on_commit_callbacks
) -> None:
    cup_tie = match_day.cup_tie
    post(cup_tie, "steward", zone="away-south-cup")
    post(cup_tie, "supervisor", zone="home-north")
    with capture_events() as events, django_capture_on_commit_callbacks(execute=True):
        sent = broadcast_send(
            fixture=cup_tie,
            sent_by=user("safety"),
            script="evacuate",
            text="Evacuate block S-L3 via the south vomitory",
            zone="away-south-cup",
        )
    assert sent.recipient_ids == [user("steward").pk]
    assert [e.type for e in events] == ["broadcast"]
    assert events[0].audience.user_ids == {user("steward").pk}
    assert events[0].data["recipients"] == ["steward"] and events[0].data["acknowledged"] == []
    with capture_events() as events, django_capture_on_commit_callbacks(execute=True):
        broadcast_ack(broadcast=sent, user=user("steward"))
        broadcast_ack(broadcast=sent, user=user("steward"))
    assert BroadcastAck.objects.filter(broadcast=sent).count() == 1
    assert [e.type for e in events] == ["broadcast.ack"]


def test_a_broadcast_to_every_steward_takes_its_scripted_text(match_day) -> None:
    cup_tie = match_day.cup_tie
    post(cup_tie, "steward", zone="away-south-cup")
    post(cup_tie, "supervisor", gate="F")
    sent = broadcast_send(fixture=cup_tie, sent_by=user("loggist"), script="lockdown")
    assert sent.text == "Lockdown"
    assert sorted(sent.recipient_ids) == sorted([user("steward").pk, user("supervisor").pk])
    with pytest.raises(LogEntryError) as refused:
        broadcast_send(fixture=cup_tie, sent_by=user("loggist"), script="sing")
    assert refused.value.field == "script"


def test_a_photo_is_kept_with_its_sha256_and_other_files_are_refused(match_day) -> None:
    cup_tie = match_day.cup_tie
    report = log_entry_append(
        fixture=cup_tie,
        author=user("steward"),
        category="offensive-material",
        text="Leaflet",
        place=Place(outside="Gate F"),
    )
    data = b"\xff\xd8\xff\xe0fake-but-typed-jpeg"
    photo = log_entry_photo_add(
        entry=report,
        author=user("steward"),
        upload=SimpleUploadedFile("leaflet.jpg", data, content_type="image/jpeg"),
    )
    import hashlib

    assert photo.sha256 == hashlib.sha256(data).hexdigest()
    assert photo.image.read() == data
    with pytest.raises(LogEntryError, match="JPEG, PNG or WebP"):
        log_entry_photo_add(
            entry=report,
            author=user("steward"),
            upload=SimpleUploadedFile("x.exe", b"MZ", content_type="application/octet-stream"),
        )
    # A file that says it is an image and is not (a renamed document) is refused too.
    with pytest.raises(LogEntryError, match="not the image it says it is"):
        log_entry_photo_add(
            entry=report,
            author=user("steward"),
            upload=SimpleUploadedFile("x.png", b"%PDF-1.7 leaflet", content_type="image/png"),
        )
    assert Photo.objects.count() == 1
    # The report, and the kept photo's SHA-256 chained after it (issue 15); the refusal wrote none.
    assert list(LogEntry.objects.order_by("seq").values_list("kind", "text")) == [
        ("report", "Leaflet"),
        ("photo", hashlib.sha256(data).hexdigest()),
    ]
