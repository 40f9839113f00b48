"""Closing a stand and evacuating it (issue 41): the control room's stands panel and alarm, and
the stand's evacuation page: before, its exits, evacuation time and stewards; after, live, the
stewards' acknowledgements and who is still inside."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from safeground.accounts.models import User
from safeground.accounts.permissions import can_close_stand, can_open_control_room, require
from safeground.errors import SafegroundError
from safeground.incidents.panels import Panel
from safeground.live.catalogue import STAND_CLOSURE
from safeground.matches.models import Fixture
from safeground.matches.selectors import fixture_for
from safeground.venues.models import Stand

from . import closures
from .evacuation import (
    evacuation_live,
    evacuation_picture,
    stand_for_evacuation,
    stands_closed,
)
from .models import StandClosure


class ClosureForm(forms.Form):
    reason = forms.CharField(
        label=_("Why (logged with the decision)"),
        max_length=closures.MAX_REASON,
        widget=forms.Textarea(attrs={"rows": 2}),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)


def stands_panel_for(user: Any, fixture: Fixture) -> Panel | None:
    if not can_open_control_room(user, fixture):
        return None
    return Panel(reverse("decisions_stands_panel", args=[fixture.pk]), (STAND_CLOSURE,))


def stands_alarm_for(user: Any, fixture: Fixture) -> Panel | None:
    if not can_open_control_room(user, fixture):
        return None
    return Panel(reverse("decisions_stands_alarm", args=[fixture.pk]), (STAND_CLOSURE,), top=True)


def _control_room(request: HttpRequest, fixture_id: int) -> Fixture:
    fixture = fixture_for(request.user, fixture_id)
    require(can_open_control_room(request.user, fixture))
    return fixture


@login_required
def stands_panel(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """Each stand of the ground, closed or open, with the way to its evacuation page."""
    fixture = _control_room(request, fixture_id)
    closed = stands_closed(fixture)
    return render(
        request,
        "decisions/_stands_panel.html",
        {
            "fixture": fixture,
            "stands": [
                (stand, closed.get(stand.pk))
                for stand in Stand.objects.filter(ground=fixture.ground)
            ],
            "may_close": can_close_stand(request.user, fixture),
        },
    )


@login_required
def stands_alarm(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """Above the log while any stand is closed (empty otherwise)."""
    fixture = _control_room(request, fixture_id)
    closed: list[StandClosure] = list(stands_closed(fixture).values())
    return render(request, "decisions/_stands_alarm.html", {"fixture": fixture, "closed": closed})


@login_required
def stand_evacuation(request: HttpRequest, fixture_id: int, stand_id: int) -> HttpResponse:
    """The stand's evacuation page; a commander closes it (evacuate) or reopens it (all clear)
    here, with a reason."""
    fixture, stand = stand_for_evacuation(request.user, fixture_id, stand_id)
    form = ClosureForm()
    status = 200
    if request.method == "POST":
        require(can_close_stand(request.user, fixture))
        form = ClosureForm(request.POST)
        status = 400
        if form.is_valid():
            act = closures.stand_reopen if request.POST.get("reopen") else closures.stand_close
            assert isinstance(request.user, User)
            try:
                act(
                    fixture=fixture,
                    stand=stand,
                    by=request.user,
                    reason=form.cleaned_data["reason"],
                )
            except SafegroundError as error:
                form.add_error(error.field if error.field in form.fields else None, error.message)
                status = error.status
            else:
                return redirect(request.path)
    return render(
        request,
        "decisions/evacuation.html",
        {
            "picture": evacuation_picture(request.user, fixture, stand),
            "live": evacuation_live(fixture, stand),
            "form": form,
        },
        status=status,
    )


@login_required
def stand_evacuation_live(request: HttpRequest, fixture_id: int, stand_id: int) -> HttpResponse:
    """The page's moving part, fetched again every few seconds: acknowledgements, still inside."""
    fixture, stand = stand_for_evacuation(request.user, fixture_id, stand_id)
    return render(
        request,
        "decisions/_evacuation_live.html",
        {"fixture": fixture, "stand": stand, "live": evacuation_live(fixture, stand)},
    )
