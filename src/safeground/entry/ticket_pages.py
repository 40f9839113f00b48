"""Tickets imported from the fixture's page: the same file, checks and matching against the
register as `safeground import-tickets`; every bad line shown, nothing written unless all is
good."""

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from safeground.matches.selectors import fixture_for_planning

from .models import Ticket
from .services import ImportReport, ground_blocks, tickets_write
from .ticket_file import TicketFileError, parse_tickets


class TicketFileForm(forms.Form):
    file = forms.FileField(label=_("The ticketing system's CSV export"))


@login_required
def fixture_tickets(request: HttpRequest, fixture_id: int) -> HttpResponse:
    fixture = fixture_for_planning(request.user, fixture_id)
    form = TicketFileForm(request.POST or None, request.FILES or None)
    errors: list[str] = []
    report: ImportReport | None = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data["file"].read()
        try:
            rows = parse_tickets(data, blocks=ground_blocks(fixture), today=timezone.localdate())
            report = tickets_write(fixture=fixture, rows=rows)
        except TicketFileError as error:
            errors = error.errors
    return render(
        request,
        "entry/tickets.html",
        {
            "fixture": fixture,
            "form": form,
            "errors": errors,
            "report": report,
            "tickets": Ticket.objects.filter(fixture=fixture).count(),
        },
        status=400 if errors else 200,
    )
