from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _

from safeground.accounts.permissions import can_plan_fixtures

from .capacity import stand_capacities, zone_capacities
from .hooks import ground_panels
from .selectors import gates_with_blocks, ground_for, ground_plan, ground_totals


@login_required
def ground(request: HttpRequest, code: str) -> HttpResponse:
    ground = ground_for(request.user, code)
    return render(
        request,
        "venues/ground.html",
        {
            "ground": ground,
            "plan": ground_plan(ground),
            "totals": ground_totals(ground),
            "gates": gates_with_blocks(ground),
            "may_plan": can_plan_fixtures(request.user, ground),
            "panels": ground_panels(request.user, ground),
        },
    )


@login_required
def capacity(request: HttpRequest, code: str) -> HttpResponse:
    """The Green Guide safe capacity of each stand and zone, with the working; ?evacuation=M
    recomputes with another evacuation time (2.5 to 8 minutes)."""
    ground = ground_for(request.user, code)
    minutes, problem = ground.evacuation_minutes, ""
    asked = request.GET.get("evacuation", "").strip()
    if asked:
        try:
            minutes = float(asked)
        except ValueError:
            problem = _("'%(asked)s' is not a number of minutes") % {"asked": asked}
        if not problem and not 2.5 <= minutes <= 8:
            problem = _("the evacuation time must be from 2.5 to 8 minutes, got %(asked)s") % {
                "asked": asked
            }
        if problem:
            minutes = ground.evacuation_minutes
    zones = list(ground.zones.all())
    by_zone = zone_capacities(ground, [z.pk for z in zones], evacuation_minutes=minutes)
    stands = stand_capacities(ground, evacuation_minutes=minutes)
    return render(
        request,
        "venues/capacity.html",
        {
            "ground": ground,
            "minutes": minutes,
            "problem": problem,
            "stands": stands,
            # Every seat is in one stand: the ground's figures are its stands' sums.
            "ground_safe": sum(capacity.safe for _stand, capacity in stands),
            "ground_seats": sum(capacity.seats for _stand, capacity in stands),
            "zones": [(zone, by_zone[zone.pk]) for zone in zones if zone.pk in by_zone],
            "rate": settings.SAFEGROUND_TURNSTILE_RATE,
        },
        status=400 if problem else 200,
    )
