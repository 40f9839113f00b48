from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from safeground.accounts.permissions import (
    can_act_on_log,
    can_assign_posts,
    can_open_control_room,
    can_send_broadcast,
    can_write_log,
    require,
)
from safeground.matches.selectors import fixture_for, fixture_zone_uses
from safeground.venues.selectors import ground_plan

from .models import Broadcast, LogEntry
from .selectors import assignable_people, categories, steward_posts


@login_required
def control_room(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """The live log and map of one match: the control room's, and the police's, one picture."""
    fixture = fixture_for(request.user, fixture_id)
    require(can_open_control_room(request.user, fixture))
    user = request.user
    may = {
        "write": can_write_log(user, fixture),
        "assign": can_act_on_log(user, fixture, "assign"),
        "escalate": can_act_on_log(user, fixture, "escalate"),
        "status": can_act_on_log(user, fixture, "status"),
        "correct": can_act_on_log(user, fixture, "correct"),
        "broadcast": can_send_broadcast(user, fixture),
        "post": can_assign_posts(user, fixture),
    }
    config = {
        "fixtureId": fixture.pk,
        "userName": str(user),
        "logUrl": reverse("api:log_list", args=[fixture.pk]),
        "appendUrl": reverse("api:log_append", args=[fixture.pk]),
        "may": may,
        "levels": dict(LogEntry.Level.choices),
        "people": assignable_people(fixture) if may["assign"] or may["post"] else [],
        "broadcastsUrl": reverse("api:broadcast_list", args=[fixture.pk]),
        "broadcastSendUrl": reverse("api:broadcast_send", args=[fixture.pk]),
        "postUrl": reverse("api:post_assign", args=[fixture.pk]),
    }
    plan = ground_plan(fixture.ground, zone_uses=fixture_zone_uses(fixture))
    return render(
        request,
        "incidents/control_room.html",
        {
            "fixture": fixture,
            "plan": plan,
            "categories": categories(),
            "config": config,
            "may": may,
            "blocks": plan.blocks,
            "scripts": Broadcast.Script.choices,
            "posts": steward_posts(fixture),
        },
    )
