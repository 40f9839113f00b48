"""The seats' labels to print: a block's sheet (a PDF), the ground page's panel of them, and the
whole ground's made in the background (its progress, then its zip). Whoever may print a
ground's seat codes (can_print_seat_codes): its safety officer and control room."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from safeground.accounts.models import User
from safeground.accounts.permissions import can_print_seat_codes, require
from safeground.venues.models import Block, Ground

from .models import SeatLabelsJob
from .seat_sheets import (
    block_sheet,
    ground_labels_ask,
    ground_labels_under_way,
    sheet_filename,
)


def ground_panel_for(user: Any, ground: Ground) -> str | None:
    """The ground page's panel of seat labels (venues.hooks.ground_panels)."""
    if not can_print_seat_codes(user, ground):
        return None
    return reverse("supporters_seat_labels", args=[ground.code])


def _ground(request: HttpRequest, ground_code: str) -> Ground:
    ground = get_object_or_404(Ground, code=ground_code)
    require(can_print_seat_codes(request.user, ground))
    return ground


def _site(request: HttpRequest) -> str:
    return request.build_absolute_uri("/").rstrip("/")


@login_required
@require_GET
def seat_sheet(request: HttpRequest, ground_code: str, block_code: str) -> HttpResponse:
    """A block's seats, each with its QR code and short address, as a PDF to print for seat
    backs (one label per seat), concourse posters and the programme."""
    ground = _ground(request, ground_code)
    block = get_object_or_404(
        Block.objects.select_related("ground", "tier__stand"), ground=ground, code=block_code
    )
    response = HttpResponse(block_sheet(block, _site(request)), content_type="application/pdf")
    response["Content-Disposition"] = f'inline; filename="{sheet_filename(block)}"'
    return response


@login_required
@require_http_methods(["GET", "POST"])
def seat_labels(request: HttpRequest, ground_code: str) -> HttpResponse:
    """The panel (an htmx fragment): each stand's blocks, a link to each one's sheet, and the
    whole ground's job: a button, its progress (the fragment asks again each second while it
    runs), then its download. POST asks for the whole ground."""
    ground = _ground(request, ground_code)
    if request.method == "POST":
        assert isinstance(request.user, User)  # login_required
        job: SeatLabelsJob | None = ground_labels_ask(
            ground=ground, asked_by=request.user, site=_site(request)
        )
        if "HX-Request" not in request.headers:  # the form sent without htmx: back to the page
            return redirect(reverse("ground", args=[ground.code]))
    else:
        job = ground_labels_under_way(ground)
    blocks = Block.objects.filter(ground=ground).select_related("tier__stand")
    stands: dict[str, list[Block]] = {}
    for block in sorted(blocks, key=lambda b: (b.tier.stand.code, b.tier.code, _natural(b.code))):
        stands.setdefault(block.tier.stand.local_name, []).append(block)
    return render(
        request,
        "supporters/seat_labels_panel.html",
        {"ground": ground, "stands": stands, "job": job},
    )


def _natural(code: str) -> tuple[str, int]:
    """N-L2 before N-L10."""
    head, _, tail = code.rpartition("-")
    stem = tail.rstrip("0123456789")
    number = tail[len(stem) :]
    return (f"{head}-{stem}", int(number) if number else 0)


@login_required
@require_GET
def seat_labels_download(request: HttpRequest, ground_code: str, job_id: int) -> FileResponse:
    ground = _ground(request, ground_code)
    job = get_object_or_404(SeatLabelsJob, pk=job_id, ground=ground)
    if job.finished_at is None or not job.file:
        raise Http404("these seat labels are not made yet")
    return FileResponse(
        job.file.open("rb"), as_attachment=True, filename=f"seat-labels-{ground.code}.zip"
    )
