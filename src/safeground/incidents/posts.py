"""Stewards' posts: who stands where for a match, each post also a chained record in the log."""

from django.db import transaction
from django.utils.translation import gettext as _

from safeground.accounts.models import Role, User
from safeground.accounts.permissions import role_holders
from safeground.languages import in_every_language
from safeground.live.catalogue import STEWARD_POST
from safeground.live.events import Audience, publish
from safeground.matches.models import Fixture
from safeground.venues.models import Concourse, Gate, Zone

from .models import LogEntry, StewardPost
from .selectors import post_label
from .services import LogEntryError, LogEntryNotFound, log_record_append


@transaction.atomic
def steward_post_assign(
    *,
    fixture: Fixture,
    steward: User,
    assigned_by: User,
    zone: str = "",
    gate: str = "",
    concourse: str = "",
) -> StewardPost:
    """Put a steward at a zone, gate or concourse for this match (a new post replaces the old)."""
    given = [
        (f, code.strip())
        for f, code in (("zone", zone), ("gate", gate), ("concourse", concourse))
        if code.strip()
    ]
    if len(given) != 1:
        raise LogEntryError("post", _("give exactly one of zone, gate or concourse"))
    field_name, code = given[0]
    place: Zone | Gate | Concourse | None
    if field_name == "zone":
        place = Zone.objects.filter(ground=fixture.ground, code=code).first()
    elif field_name == "gate":
        place = Gate.objects.filter(ground=fixture.ground, code=code).first()
    else:
        place = Concourse.objects.filter(ground=fixture.ground, code=code).first()
    if place is None:
        said = _("no %(place)s '%(code)s' at %(ground)s")
        raise LogEntryNotFound(
            field_name, said % {"place": field_name, "code": code, "ground": fixture.ground.name}
        )
    stewards = role_holders(fixture.ground.organisation_id, Role.STEWARD, Role.STEWARD_SUPERVISOR)
    if not stewards.filter(user=steward).exists():
        raise LogEntryError(
            "steward",
            _("%(username)s is not a steward of the home club") % {"username": steward.username},
        )
    post = StewardPost.objects.create(
        fixture=fixture, steward=steward, assigned_by=assigned_by, **{field_name: place}
    )
    # Chained, so the record of who stood where is anchored with the log.
    # The log keeps the post in English; the live frame carries the other languages beside it.
    label, label_names = in_every_language(lambda: post_label(post))
    record = log_record_append(
        fixture=fixture,
        author=assigned_by,
        kind=LogEntry.Kind.POST,
        assignee=steward,
        home_only=True,
        note=f"post {post.pk}: {label}",
        **{field_name: place},
    )
    publish(
        fixture_id=fixture.pk,
        type=STEWARD_POST,
        data={
            "steward": steward.username,
            "name": str(steward),
            "post": label,
            "post_names": label_names,
        },
        # The home club's staff, and the steward themself: their phone shows the new post.
        audience=Audience(home_only=True, user_ids=frozenset({steward.pk})),
        chain_seq=record.seq,
    )
    return post
