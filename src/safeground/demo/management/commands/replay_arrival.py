"""`safeground replay-arrival [--speed N]`: the cup tie's arrival, through the turnstiles."""

import time
from datetime import datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection
from django.utils import timezone

from safeground.accounts.models import User
from safeground.demo.arrival import (
    Tally,
    arrival_device,
    arrival_plan,
    arrival_replay,
    device_info,
)
from safeground.demo.season import CUP_TIE_OPPONENT
from safeground.entry.models import Ticket, TicketFlag
from safeground.entry.runtime import live_counts, lookups
from safeground.entry.selectors import entry_counts
from safeground.entry.services import flag_confirm
from safeground.matches.models import Fixture


class Command(BaseCommand):
    help = "Play the cup tie's arrival through the turnstiles (the gates demo)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--speed", type=float, default=60.0,
            help="times real time (default 60: the hour before kick-off in a minute, as fast as"
            " the database allows); 0: no pauses",
        )  # fmt: skip
        parser.add_argument("--share", type=float, default=0.93, help="ticket holders who come")
        parser.add_argument(
            "--confirm", type=int, default=4,
            help="ban flags confirmed before the gates open, in all (best first; default 4)",
        )  # fmt: skip
        parser.add_argument(
            "--lanes", type=int, default=0,
            help="turnstiles scanning side by side (default 4 on PostgreSQL, 1 on SQLite)",
        )  # fmt: skip

    def handle(self, *args: Any, speed: float, share: float, confirm: int,
               lanes: int, **options: Any) -> None:  # fmt: skip
        if speed < 0 or not 0 < share <= 1:
            raise CommandError("--speed must be 0 or more; --share between 0 and 1")
        fixture = (
            Fixture.objects.filter(away_club__name=CUP_TIE_OPPONENT)
            .select_related("home_club", "away_club", "ground")
            .first()
        )
        if fixture is None:
            raise CommandError("no demo cup tie: run `safeground demo` first")
        if not Ticket.objects.filter(fixture=fixture).exists():
            raise CommandError(
                "the cup tie has no tickets: load the demo with SAFEGROUND_DEMO_TICKETS=all"
            )
        device = self._device(fixture)
        self._confirm_flags(fixture, confirm)
        plan = arrival_plan(fixture, share=share)
        self.stdout.write(
            f"{fixture} ({timezone.localtime(fixture.kickoff):%d %b %Y, kick-off %H:%M}):"
            f" {len(plan):,} scans at {speed:g}x. Watch /fixtures/{fixture.pk}/control/"
        )
        started = time.monotonic()
        lanes = lanes or (4 if connection.vendor == "postgresql" else 1)
        tally = arrival_replay(
            plan, device=device, speed=speed, lanes=lanes, on_progress=self._progress
        )
        live_counts.counts_publish(fixture.pk)  # the final figures, at once
        self._summary(fixture, tally, time.monotonic() - started)

    def _device(self, fixture: Fixture) -> lookups.DeviceInfo:
        device = arrival_device(fixture)
        if device.revoked_at is not None:
            raise CommandError(f"the device {device.name!r} is revoked")
        return device_info(device)

    def _confirm_flags(self, fixture: Fixture, count: int) -> None:
        done = TicketFlag.objects.filter(
            ticket__fixture=fixture, status=TicketFlag.Status.CONFIRMED
        ).count()
        flags = TicketFlag.objects.filter(
            ticket__fixture=fixture, status=TicketFlag.Status.OPEN
        ).order_by("-score", "pk")[: max(0, count - done)]
        officer = User.objects.filter(username="banofficer").first()
        if officer is None:
            return
        for flag in flags:
            flag_confirm(flag=flag, by=officer, note="Confirmed at the pre-match review (demo).")
        open_flags = TicketFlag.objects.filter(
            ticket__fixture=fixture, status=TicketFlag.Status.OPEN
        ).count()
        confirmed = TicketFlag.objects.filter(
            ticket__fixture=fixture, status=TicketFlag.Status.CONFIRMED
        ).count()
        self.stdout.write(
            f"Register: {confirmed} flagged holders confirmed as banned, {open_flags} still open"
            " (the gates ask for ID)"
        )

    def _progress(self, at: datetime, tally: Tally) -> None:
        denied = tally.denied
        reasons = ", ".join(f"{reason} {n}" for reason, n in sorted(denied.items()))
        self.stdout.write(
            f"  {timezone.localtime(at):%H:%M}  scans {tally.scans:>6,}  admitted"
            f" {tally.admitted:>6,}  denied {sum(denied.values()):>4}"
            + (f" ({reasons})" if reasons else "")
        )

    def _summary(self, fixture: Fixture, tally: Tally, seconds: float) -> None:
        counts = entry_counts(fixture)
        self.stdout.write(
            f"Done in {seconds:.0f} s ({tally.scans / max(seconds, 1e-9):,.0f} scans/s"
            + (f", {tally.replayed:,} answered from earlier scans" if tally.replayed else "")
            + ")."
        )
        self.stdout.write(f"Inside: {counts['admitted']:,} of {counts['capacity']:,} seats.")
        for zone in counts["zones"]:
            if zone["capacity"]:
                flag = "  WARNING" if zone["warning"] else ""
                self.stdout.write(
                    f"  {zone['name']:<32} {zone['admitted']:>6,} / {zone['capacity']:>6,}"
                    f"  {zone['share']:>4.0%}{flag}"
                )
        self.stdout.write(
            "By gate: "
            + ", ".join(f"{g['code']} {g['admitted']:,}" for g in counts["gates"] if g["admitted"])
        )
        by_reason = {k: v for k, v in counts["denied"]["by_reason"].items() if v}
        self.stdout.write(f"Denied: {counts['denied']['total']} {by_reason}")
        self.stdout.write(f"Prevented from attending: {counts['prevented']}")
