from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from safeground.accounts.permissions import can_plan_fixtures

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
        },
    )
