"""Every route by every role of the cast (tests/factories.py: the demo's logins), with the status
each must get. A route without a row fails.

The table is the specification of who may open what; later work adds its routes here.
"""

from collections.abc import Callable
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from safeground.accounts.models import User
from safeground.bans.models import Ban
from safeground.deployment.models import CheckResult, MatchCheck
from safeground.deployment.services import check_record
from safeground.entry.models import TicketFlag
from safeground.incidents.broadcasting import broadcast_send
from safeground.incidents.models import Broadcast, LogEntry
from safeground.incidents.posts import steward_post_assign
from safeground.incidents.services import Place, log_entry_append, log_entry_assign
from safeground.matches.models import Fixture, PlanVersion
from safeground.matches.selectors import plan_current
from safeground.matches.services import fixture_share, plan_generate, plan_sign
from safeground.partners.services import broadcast_told
from safeground.venues.models import Stand
from tests import factories

# A well-formed scan: refused to every user all the same (only device keys may scan).
A_SCAN = {
    "barcode": "EFL4-000001",
    "turnstile": "F03",
    "scanned_at": "2016-10-26T18:00:00Z",
    "nonce": "00000000-0000-4000-8000-000000000001",
}
ROLES = ["anonymous", *[username for username, _, _ in factories.CAST]]
CLUB = ["safety", "loggist", "supervisor", "steward", "banofficer", "auditor", "security"]
POLICE = ["police", "spotter"]
GROUND_STAFF = ["safety", "loggist", "supervisor", "banofficer", "auditor", "security"]


def expect(anonymous: int, default: int, **by_role: int) -> dict[str, int]:
    table = {role: default for role in ROLES}
    table["anonymous"] = anonymous
    table.update(by_role)
    return table


def only(anonymous: int, allowed: list[str], yes: int, no: int) -> dict[str, int]:
    return expect(anonymous, no, **dict.fromkeys(allowed, yes))


def cup_tie() -> Fixture:
    return Fixture.objects.get(away_club__name=factories.AWAY_CLUB)


def a_stand() -> Stand:
    return Stand.objects.get(ground=cup_tie().ground, code="S")


def league_match() -> Fixture:
    return Fixture.objects.get(away_club__name=factories.OTHER_CLUB)


def a_report() -> LogEntry:
    """A fresh open incident in the cup tie's log, so every action on it is a valid move."""
    return log_entry_append(
        fixture=cup_tie(),
        author=User.objects.get(username="loggist"),
        category="missile",
        text="Coins thrown towards the home section",
        place=Place(block="S-L1"),
    )


def act(action: str) -> Callable[[], str]:
    return lambda: reverse(f"api:log_{action}", args=[cup_tie().pk, a_report().pk])


def an_assigned_report() -> LogEntry:
    report = a_report()
    return log_entry_assign(
        entry=report,
        author=User.objects.get(username="loggist"),
        assignee=User.objects.get(username="steward"),
    ).concerns  # type: ignore[return-value]


def a_plan() -> PlanVersion:
    """The cup tie's current plan, made by the safety officer from the category if none."""
    fixture = cup_tie()
    return plan_current(fixture) or plan_generate(
        fixture=fixture, by=User.objects.get(username="safety")
    )


def stewards_posted() -> Fixture:
    """The cup tie with the steward and the supervisor posted to the away section."""
    fixture, safety = cup_tie(), User.objects.get(username="safety")
    for name in ("steward", "supervisor"):
        steward_post_assign(
            fixture=fixture,
            steward=User.objects.get(username=name),
            assigned_by=safety,
            zone="away-south-cup",
        )
    return fixture


def a_broadcast() -> Broadcast:
    fixture = stewards_posted()
    return broadcast_send(
        fixture=fixture, sent_by=User.objects.get(username="safety"), script="hold"
    )


def a_partner_alert() -> str:
    """The identifier of the CAP alert partners were told of a broadcast (its hook runs after
    commit, which these tests never do)."""
    return broadcast_told(a_broadcast()).identifier


def _a_subscription() -> dict:
    """A phone's push subscription at the tests' push service (a fresh P-256 key, 16 bytes)."""
    import base64
    import os

    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    point = ec.generate_private_key(ec.SECP256R1()).public_key()
    raw = point.public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
    return {
        "endpoint": "http://127.0.0.1:9/push/permissions-table",
        "keys": {"p256dh": b64(raw), "auth": b64(os.urandom(16))},
    }


A_SUBSCRIPTION = _a_subscription()
# Broadcast delivery, recipient by recipient: the home club's control-room staff.
DELIVERY_READERS = ["safety", "loggist", "supervisor", "auditor"]


def a_photo() -> dict:
    # The smallest valid PNG: one transparent pixel.
    png = bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
    return {"photo": SimpleUploadedFile("pitch.png", png, content_type="image/png")}


def a_photo_url(*, block: str) -> str:
    """A photo of a report in this block of the cup tie, the steward posted to the away section."""
    from safeground.incidents.photos import log_entry_photo_add

    fixture = stewards_posted()
    report = log_entry_append(
        fixture=fixture,
        author=User.objects.get(username="loggist"),
        category="missile",
        text="Coins thrown",
        place=Place(block=block),
    )
    photo = log_entry_photo_add(
        entry=report, author=User.objects.get(username="loggist"), upload=a_photo()["photo"]
    )
    return reverse("api:log_photo_file", args=[fixture.pk, report.pk, photo.pk])


def a_checkpoint_url() -> str:
    """A report in the cup tie's log, its head signed, and the URL of that checkpoint's file."""
    from safeground.incidents.services import log_checkpoint_make

    checkpoint = log_checkpoint_make(fixture=a_report().fixture)
    return reverse("log_checkpoint_download", args=[checkpoint.fixture_id, checkpoint.entries])


def a_report_url(name: str) -> str:
    """A route of the cup tie whose log has a report in it (so there is a head to sign)."""
    return reverse(name, args=[a_report().fixture_id])


LOG_WRITERS = ["safety", "loggist", "supervisor", "steward", "police", "spotter"]
# The log's signed checkpoints: whoever opens the control room (every organisation working the
# match, stewards aside) reads and downloads them; the club's control room signs one on request.
CHECKPOINT_READERS = {"steward": 403}
LOG_SIGNERS = ["safety", "loggist"]
PLAN_SIGNERS = ["safety", "police"]


# The decision log (the decisions app): whoever opens the control room reads it (the police and
# the away club too); the loggist, the safety officer and the police commander log decisions; the
# control room (safety officer, loggist) switches the radio down and back up.
DECISION_READERS = {"steward": 403}
DECISION_LOGGERS = ["safety", "loggist", "police"]
RADIO_SWITCHERS = ["safety", "loggist"]
A_DECISION = {"decision_maker": "police", "decision": "Hold the away end", "rationale": "Surge"}
# Who declares a major incident and corrects its M/ETHANE report: the commanders.
COMMANDERS = ["safety", "police"]


def a_methane_report():  # type: ignore[no-untyped-def]
    from safeground.decisions.selectors import methane_latest
    from safeground.decisions.services import major_incident_declare

    return methane_latest(cup_tie()) or major_incident_declare(
        fixture=cup_tie(),
        by=User.objects.get(username="safety"),
        parts={"major_incident": "Yes", "exact_location": "Gate 4", "incident_type": "Crush"},
    )


def a_decision(review: bool = False):  # type: ignore[no-untyped-def]
    from datetime import timedelta

    from django.utils import timezone

    from safeground.decisions.services import DecisionParts, decision_record

    now = timezone.now()
    return decision_record(
        fixture=cup_tie(),
        loggist=User.objects.get(username="loggist"),
        decision_maker=User.objects.get(username="police"),
        parts=DecisionParts(
            decision="Hold the away end",
            rationale="Surge on the concourse",
            review_at=now + timedelta(seconds=1) if review else None,
        ),
    )


def radio_in_state(down: bool) -> Fixture:
    """The cup tie with the radio marked down (or up), whatever the row before left it."""
    from safeground.decisions.selectors import radio_is_down
    from safeground.decisions.services import radio_down, radio_restore

    fixture = cup_tie()
    if radio_is_down(fixture) != down:
        switch = radio_down if down else radio_restore
        safety = User.objects.get(username="safety")
        switch(fixture=fixture, by=safety, decision_maker=safety)
    return fixture


def stewards_checked_in() -> Fixture:
    from safeground.deployment.services import steward_check_in

    fixture = stewards_posted()
    steward_check_in(fixture=fixture, steward=User.objects.get(username="steward"))
    return fixture


# The banned-supporter register (docs/adr/0004-ban-register.md). POST-only routes are opened
# with GET: those allowed get 405, everyone else 403.
REGISTER = ["safety", "banofficer", "security"]
BAN_OFFICERS = ["banofficer", "security"]


@pytest.fixture
def match_day_with_register(match_day):
    """The match day, and on the home club's register a ban in each status the routes act on
    (each proposed by banofficer and approved by safety) and a flagged ticket of the cup tie."""
    cast = match_day.cast
    for status in ("proposed", "active", "appealed"):
        factories.ban(
            cast.home, status=status, proposed_by=cast["banofficer"], approved_by=cast["safety"]
        )
    factories.flag(factories.ticket(match_day.cup_tie, block="S-L2"), a_ban("active"))
    return match_day


A_PROPOSAL = {
    "first_names": "Permission",
    "last_name": "Table",
    "date_of_birth": "1990-01-02",
    "type": "club_ban",
    "scope": "club",
    "starts_on": "2030-01-01",
    "is_life": True,
    "grounds": "Permission table proposal",
}
A_BATCH = {"blinded": ["00" * 32]}
SUPPORTER_TRIAGERS = ["safety", "loggist"]


def a_seat_code() -> str:
    from safeground.supporters.seats import seat_code

    return seat_code(cup_tie().ground.blocks.get(code="S-L1"), "A", 1)


def a_supporter_report():  # type: ignore[no-untyped-def]
    """A supporter's report (with a photo and a contact) in the cup tie's queue."""
    import io
    import uuid

    from PIL import Image

    from safeground.supporters.services import Sender, report_receive

    picture = io.BytesIO()
    Image.new("RGB", (4, 4), "green").save(picture, format="PNG")
    fixture = cup_tie()
    return report_receive(
        fixture=fixture,
        sender=Sender("web", f"permissions-{uuid.uuid4().hex}", f"10.1.{uuid.uuid4().int % 250}.1"),
        block=fixture.ground.blocks.get(code="S-L1"),
        category="abuse-racist",
        contact="by text",
        photo=SimpleUploadedFile("p.png", picture.getvalue(), content_type="image/png"),
    )


PLANNERS = ["safety"]
A_FIXTURE = {
    "ground": "riverside-park",
    "opponent": "Northgate Albion",
    "competition": factories.LEAGUE,
    "kickoff": "2030-08-10 15:00",
    "layout": "league",
    "away_allocation": 300,
    "shared_with": ["riverside-constabulary"],
}


def shared_cup_tie() -> Fixture:
    """The cup tie, shared again with the away club, so each role can try to unshare it."""
    fixture = cup_tie()
    away = fixture.away_club.organisation
    fixture_share(fixture=fixture, organisation=away, purpose="away_club", by=None)  # type: ignore[arg-type]
    return fixture


def a_ban(status: str) -> Ban:
    """A ban: proposed, active or appealed (all proposed by banofficer, approved by safety)."""
    return Ban.objects.filter(status=status).order_by("pk").first()  # type: ignore[return-value]


def a_fresh_ban(status: str) -> Ban:
    """A new ban of the home club in this status, for the API's writes: each role acts on its
    own (proposed by banofficer, approved by safety)."""
    home = User.objects.get(username="banofficer").memberships.first().organisation  # type: ignore[union-attr]
    return factories.ban(
        home,
        status=status,
        proposed_by=User.objects.get(username="banofficer"),
        approved_by=User.objects.get(username="safety"),
    )


def a_flag() -> TicketFlag:
    return TicketFlag.objects.order_by("pk").first()  # type: ignore[return-value]


# Casework (issue 15): the home club's safety officer and ban officers and the policing force's
# officers; never a steward, a loggist, a supervisor, the auditor or the away club.
CASE_WORKERS = ["safety", "banofficer", "security", "police", "spotter"]


def a_case():  # type: ignore[no-untyped-def]
    """A case on a fresh missile report in S-L1 of the cup tie, opened by the ban officer."""
    return factories.case(
        cup_tie(), entries=[a_report()], by=User.objects.get(username="banofficer")
    )


def an_evidence_url() -> str:
    evidence = factories.evidence(a_case())
    return reverse("evidence_file", args=[evidence.pk])


def a_locker_photo_url(*, block: str) -> str:
    """The locker's route for a photo of a report in this block (see a_photo_url)."""
    photo_id = a_photo_url(block=block).rstrip("/").split("/")[-1]
    return reverse("evidence_photo", args=[photo_id])


# The look-up's body names a report made when its URL is (the table builds the URL first).
WHO = {"entries": [0], "rows": 1, "reason": "Permission table look-up"}


def who_url() -> str:
    WHO["entries"] = [a_report().pk]
    return reverse("api:who_was_there", args=[cup_tie().pk])


WHO_COUNT = {"entries": [0]}


def who_count_url() -> str:
    WHO_COUNT["entries"] = [a_report().pk]
    return reverse("api:who_was_there_count", args=[cup_tie().pk])


DEPLOYMENT = ["safety", "loggist", "supervisor", "auditor"]
STEWARDS = ["steward", "supervisor"]


def a_check() -> MatchCheck:
    """The first of the cup tie's pre-match checks (prepared from the checklist if none)."""
    fixture = cup_tie()
    return fixture.match_checks.order_by("pk").first() or factories.checks(fixture)[0]


def an_away_check() -> MatchCheck:
    """A check in the cup tie's away section (where stewards_posted() puts the stewards)."""
    a_check()
    return cup_tie().match_checks.filter(zone__code="away-south-cup").order_by("pk").first()  # type: ignore[return-value]


def a_signed_off_plan() -> PlanVersion:
    """The cup tie's plan, signed off by the safety officer and the police commander."""
    plan = a_plan()
    for name in ("safety", "police"):
        if not plan.sign_offs.filter(user__username=name).exists():
            plan_sign(fixture=plan.fixture, by=User.objects.get(username=name), version=plan.number)
    return plan


def a_check_photo() -> CheckResult:
    """A failed check of the cup tie with a photo, taken by the steward posted there."""
    found = CheckResult.objects.exclude(photo="").first()
    if found is not None:
        return found
    fixture = cup_tie()
    steward = User.objects.get(username="steward")
    post = factories.post(fixture, steward, gate="F")
    check = a_check()
    check = fixture.match_checks.filter(gate=post.gate).first() or check
    return check_record(
        check=check, by=steward, outcome="fail", note="Turnstile jammed", **a_photo()
    )


def a_device_revoke_url() -> str:
    """The revoke page of a turnstile of the home club (made once)."""
    from safeground.accounts.models import Device

    home = cup_tie().ground.organisation
    device = Device.objects.filter(organisation=home).first() or factories.device(home)[0]
    return reverse("device_revoke", args=[device.pk])


# Routes called with another method than GET (no body) or POST (a body).
METHODS = {
    "api:fixture_change": "patch",
    "api:fixture_unshare": "delete",
    "api:partners_cap_push": "put",
}

# route name -> rows of (how to build its URL, expected status per role[, POST body])
Row = (
    tuple[Callable[[], str], dict[str, int]]
    | tuple[Callable[[], str], dict[str, int], dict | Callable[[], dict]]
)
TABLE: dict[str, list[Row]] = {
    "login": [(lambda: reverse("login"), expect(200, 302))],
    "logout": [(lambda: reverse("logout"), expect(405, 405))],
    "second_factor": [(lambda: reverse("second_factor"), expect(302, 200))],
    # The language switch: anyone, logged in or not (the log-in page has it); a GET changes
    # nothing and goes back (to the start page).
    "set_language": [(lambda: reverse("set_language"), expect(302, 302))],
    # The browser's icon: anyone, the log-in page included; a redirect to the static file.
    "favicon": [(lambda: reverse("favicon"), expect(301, 301))],
    "home": [(lambda: reverse("home"), expect(302, 200))],
    "ground": [
        (
            lambda: reverse("ground", args=["riverside-park"]),
            only(302, GROUND_STAFF, 200, 403),
        )
    ],
    "ground_capacity": [
        (
            lambda: reverse("ground_capacity", args=["riverside-park"]),
            only(302, GROUND_STAFF, 200, 403),
        )
    ],
    "fixture": [
        (lambda: reverse("fixture", args=[cup_tie().pk]), expect(302, 200)),
        (lambda: reverse("fixture", args=[league_match().pk]), expect(302, 200, liaison=403)),
    ],
    # Setting up the season: the ground's safety officer only.
    "fixture_new": [
        (
            lambda: reverse("fixture_new", args=["riverside-park"]),
            only(302, PLANNERS, 200, 403),
        )
    ],
    "fixtures_season_import": [
        (
            lambda: reverse("fixtures_season_import", args=["riverside-park"]),
            only(302, PLANNERS, 200, 403),
        )
    ],
    "fixture_edit": [
        (
            lambda: reverse("fixture_edit", args=["riverside-park", cup_tie().pk]),
            only(302, PLANNERS, 200, 403),
        )
    ],
    "fixture_tickets": [
        (
            lambda: reverse("fixture_tickets", args=[cup_tie().pk]),
            only(302, PLANNERS, 200, 403),
        )
    ],
    "api:fixture_add": [
        (lambda: reverse("api:fixture_add"), only(401, PLANNERS, 201, 403), A_FIXTURE)
    ],
    "api:fixture_change": [
        (
            lambda: reverse("api:fixture_change", args=[cup_tie().pk]),
            only(401, PLANNERS, 200, 403),
            {"away_allocation": 550},
        )
    ],
    "api:fixture_share": [
        (
            lambda: reverse("api:fixture_share", args=[league_match().pk]),
            only(401, PLANNERS, 200, 403),
            {"organisation": "riverside-constabulary"},
        )
    ],
    "api:fixture_unshare": [
        (
            lambda: reverse(
                "api:fixture_unshare",
                args=[shared_cup_tie().pk, shared_cup_tie().away_club.organisation.slug],  # type: ignore[union-attr]
            ),
            only(401, PLANNERS, 204, 403),
            {},
        )
    ],
    # Risk assessment and match plan: everyone working the match but stewards and the away club;
    # assessing again: the home safety officer and the policing force's commander.
    "fixture_risk": [
        (
            lambda: reverse("fixture_risk", args=[cup_tie().pk]),
            expect(302, 200, steward=403, liaison=403),
        )
    ],
    "api:fixture_risk": [
        (
            lambda: reverse("api:fixture_risk", args=[cup_tie().pk]),
            expect(401, 200, steward=403, liaison=403),
        )
    ],
    "api:fixture_risk_assess": [
        (
            lambda: reverse("api:fixture_risk_assess", args=[cup_tie().pk]),
            only(401, PLAN_SIGNERS, 201, 403),
            {},
        )
    ],
    "fixture_plan": [
        (
            lambda: reverse("fixture_plan", args=[cup_tie().pk]),
            expect(302, 200, steward=403, liaison=403),
        )
    ],
    # No plan made yet: 404 for whoever may read one.
    "api:fixture_plan": [
        (
            lambda: reverse("api:fixture_plan", args=[cup_tie().pk]),
            expect(401, 404, steward=403, liaison=403),
        )
    ],
    # Made from the category (each allowed request makes a version): the safety officer only.
    "api:fixture_plan_save": [
        (
            lambda: reverse("api:fixture_plan_save", args=[cup_tie().pk]),
            only(401, ["safety"], 201, 403),
            {},
        )
    ],
    "api:fixture_plan_sign": [
        (
            lambda: reverse("api:fixture_plan_sign", args=[a_plan().fixture_id]),
            only(401, PLAN_SIGNERS, 201, 403),
            {"version": 1},  # the plan a_plan() makes
        )
    ],
    "api:fixture_list": [(lambda: reverse("api:fixture_list"), expect(401, 200))],
    "api:fixture_detail": [
        (lambda: reverse("api:fixture_detail", args=[cup_tie().pk]), expect(401, 200)),
        (
            lambda: reverse("api:fixture_detail", args=[league_match().pk]),
            expect(401, 200, liaison=403),
        ),
    ],
    # Users are not devices: only a device key opens it (tests/accounts/test_devices.py).
    "api:device_whoami": [(lambda: reverse("api:device_whoami"), expect(401, 401))],
    "api:api-root": [(lambda: reverse("api:api-root"), expect(404, 404))],
    # Turnstiles and scanners only (tests/entry/test_scan.py): a user session is not a device.
    "api:entry_scan": [(lambda: reverse("api:entry_scan"), expect(401, 401), A_SCAN)],
    # Offline scanners: device keys only, like the scan itself (tests/entry/test_bundle.py,
    # test_offline.py).
    "api:entry_bundle": [
        (lambda: reverse("api:entry_bundle") + "?turnstile=F03", expect(401, 401))
    ],
    "api:entry_bundle_key": [(lambda: reverse("api:entry_bundle_key"), expect(401, 401))],
    "api:entry_offline_scans": [
        (
            lambda: reverse("api:entry_offline_scans"),
            expect(401, 401),
            {"scans": [A_SCAN | {"decision": "admit", "reason": None}]},
        )
    ],
    # The scanner page and its service worker: no login (the page works under a device key).
    "entry_scanner": [(lambda: reverse("entry_scanner"), expect(200, 200))],
    "entry_scanner_sw": [(lambda: reverse("entry_scanner_sw"), expect(200, 200))],
    # The gates' counts: whoever may open the match's control room.
    "api:entry_counts": [
        (lambda: reverse("api:entry_counts", args=[cup_tie().pk]), expect(401, 200, steward=403)),
        (
            lambda: reverse("api:entry_counts", args=[league_match().pk]),
            expect(401, 200, steward=403, liaison=403),
        ),
    ],
    "control_room": [
        (lambda: reverse("control_room", args=[cup_tie().pk]), expect(302, 200, steward=403)),
        (
            lambda: reverse("control_room", args=[league_match().pk]),
            expect(302, 200, steward=403, liaison=403),
        ),
    ],
    "steward_page": [
        (
            lambda: reverse("steward_page", args=[cup_tie().pk]),
            only(302, ["steward", "supervisor"], 200, 403),
        )
    ],
    # The page's service worker: the same people, since it keeps the page for them offline.
    "steward_service_worker": [
        (
            lambda: reverse("steward_service_worker", args=[cup_tie().pk]),
            only(302, ["steward", "supervisor"], 200, 403),
        )
    ],
    "api:log_list": [(lambda: reverse("api:log_list", args=[cup_tie().pk]), expect(401, 200))],
    "log_checkpoints": [
        (
            lambda: reverse("log_checkpoints", args=[cup_tie().pk]),
            expect(302, 200, **CHECKPOINT_READERS),
        ),
        (
            lambda: reverse("log_checkpoints", args=[league_match().pk]),
            expect(302, 200, liaison=403, **CHECKPOINT_READERS),
        ),
    ],
    "log_checkpoints_download": [
        (
            lambda: reverse("log_checkpoints_download", args=[cup_tie().pk]),
            expect(302, 200, **CHECKPOINT_READERS),
        ),
        (
            lambda: reverse("log_checkpoints_download", args=[league_match().pk]),
            expect(302, 200, liaison=403, **CHECKPOINT_READERS),
        ),
    ],
    "log_checkpoint_download": [
        (a_checkpoint_url, expect(302, 200, **CHECKPOINT_READERS)),
    ],
    "api:log_checkpoints": [
        (
            lambda: reverse("api:log_checkpoints", args=[cup_tie().pk]),
            expect(401, 200, **CHECKPOINT_READERS),
        ),
        (
            lambda: reverse("api:log_checkpoints", args=[league_match().pk]),
            expect(401, 200, liaison=403, **CHECKPOINT_READERS),
        ),
    ],
    "api:log_checkpoint_make": [
        (
            lambda: a_report_url("api:log_checkpoint_make"),
            only(401, LOG_SIGNERS, 201, 403),
            {"full_time": True},
        )
    ],
    "api:log_append": [
        (
            lambda: reverse("api:log_append", args=[cup_tie().pk]),
            only(401, LOG_WRITERS, 201, 403),
            {"category": "missile", "block": "S-L2", "text": "Bottle thrown", "severity": 3},
        )
    ],
    "api:log_assign": [
        (
            act("assign"),
            only(401, ["safety", "loggist", "supervisor"], 200, 403),
            {"assignee": "steward"},
        )
    ],
    "api:log_escalate": [
        (
            act("escalate"),
            only(401, ["safety", "loggist", "supervisor", "police", "spotter"], 200, 403),
            {"to": "police"},
        )
    ],
    "api:log_status": [
        (
            act("status"),
            only(401, ["safety", "loggist", "supervisor", "police"], 200, 403),
            {"status": "resolved"},
        )
    ],
    "api:log_correct": [
        (
            act("correct"),
            only(401, ["safety", "loggist"], 200, 403),
            {"note": "typo", "text": "Coins"},
        )
    ],
    "api:log_task": [
        (
            lambda: reverse("api:log_task", args=[cup_tie().pk, an_assigned_report().pk]),
            expect(401, 403, steward=200),  # a task is its assignee's alone
            {"task": "accepted"},
        )
    ],
    "api:log_photo": [
        (
            lambda: reverse("api:log_photo", args=[cup_tie().pk, a_report().pk]),
            only(401, LOG_WRITERS, 201, 403),
            a_photo,
        )
    ],
    # Whoever may see the entry: a steward only when it is in their zones (or their task).
    "api:log_photo_file": [
        (lambda: a_photo_url(block="N-L1"), expect(401, 200, steward=403)),
        (lambda: a_photo_url(block="S-L1"), expect(401, 200)),
    ],
    "api:post_assign": [
        (
            lambda: reverse("api:post_assign", args=[cup_tie().pk]),
            only(401, ["safety", "loggist", "supervisor"], 201, 403),
            {"steward": "steward", "zone": "away-south-cup"},
        )
    ],
    "api:broadcast_send": [
        (
            lambda: reverse("api:broadcast_send", args=[stewards_posted().pk]),
            only(401, ["safety", "loggist"], 201, 403),
            {"script": "hold"},
        )
    ],
    "api:broadcast_list": [
        (lambda: reverse("api:broadcast_list", args=[cup_tie().pk]), expect(401, 200))
    ],
    "api:broadcast_ack": [
        (
            lambda: reverse("api:broadcast_ack", args=[cup_tie().pk, a_broadcast().pk]),
            only(401, ["steward", "supervisor"], 200, 403),
            {},
        )
    ],
    # Push alerts (alerts/): a phone subscribes for whoever has a steward page; its service
    # worker reports with the token its push carried (no session: 401 without it, whoever asks).
    "api:alert_subscribe": [
        (
            lambda: reverse("api:alert_subscribe"),
            only(401, ["steward", "supervisor"], 201, 403),
            A_SUBSCRIPTION,
        )
    ],
    "api:alert_unsubscribe": [
        (
            lambda: reverse("api:alert_unsubscribe"),
            expect(401, 200),
            {"endpoint": A_SUBSCRIPTION["endpoint"]},
        )
    ],
    "api:alert_receipt": [
        (lambda: reverse("api:alert_receipt"), expect(401, 401), {"state": "delivered"})
    ],
    "api:broadcast_seen": [
        (
            lambda: reverse("api:broadcast_seen", args=[cup_tie().pk, a_broadcast().pk]),
            only(401, ["steward", "supervisor"], 200, 403),
            {},
        )
    ],
    "api:broadcast_delivery": [
        (
            lambda: reverse("api:broadcast_delivery", args=[cup_tie().pk, a_broadcast().pk]),
            only(401, DELIVERY_READERS, 200, 403),
        )
    ],
    "alerts_phone_panel": [
        (
            lambda: reverse("alerts_phone_panel", args=[cup_tie().pk]),
            only(302, ["steward", "supervisor"], 200, 403),
        )
    ],
    "alerts_delivery_panel": [
        (
            lambda: reverse("alerts_delivery_panel", args=[cup_tie().pk]),
            only(302, DELIVERY_READERS, 200, 403),
        )
    ],
    "alerts_overdue_panel": [
        (
            lambda: reverse("alerts_overdue_panel", args=[cup_tie().pk]),
            only(302, DELIVERY_READERS, 200, 403),
        )
    ],
    # What partner agencies are told (partners/): every organisation working the match but its
    # stewards reads its CAP alerts; the feed answers everyone signed in (their own, maybe none),
    # an alert not theirs is a 404; the certificate is public; the police force's commander
    # sets its push endpoint.
    "partners_told": [
        (
            lambda: reverse("partners_told", args=[cup_tie().pk]),
            expect(302, 200, steward=403),
        )
    ],
    "partners_panel": [
        (
            lambda: reverse("partners_panel", args=[cup_tie().pk]),
            expect(302, 200, steward=403),
        )
    ],
    "api:partners_cap_feed": [(lambda: reverse("api:partners_cap_feed"), expect(401, 200))],
    "api:partners_cap_certificate": [
        (lambda: reverse("api:partners_cap_certificate"), expect(200, 200))
    ],
    "api:partners_cap_alert": [
        (
            lambda: reverse("api:partners_cap_alert", args=[a_partner_alert()]),
            expect(401, 200, steward=404),
        )
    ],
    "api:partners_cap_push": [
        (
            lambda: reverse("api:partners_cap_push"),
            only(401, ["police"], 200, 403),
            {"organisation": "riverside-constabulary", "url": "https://partners.example/cap"},
        )
    ],
    "api:openapi-json": [(lambda: reverse("api:openapi-json"), expect(200, 200))],
    "api:openapi-view": [(lambda: reverse("api:openapi-view"), expect(200, 200))],
    # The liaison is the away club's safety officer: its own (empty) register, nothing of ours.
    "register": [(lambda: reverse("register"), only(302, [*REGISTER, "liaison"], 200, 403))],
    "ban_propose": [(lambda: reverse("ban_propose"), only(302, BAN_OFFICERS, 200, 403))],
    # The reason form; the record itself only after a reason (tests/bans/test_pages.py).
    "person": [
        (lambda: reverse("person", args=[a_ban("active").person_id]), only(302, REGISTER, 200, 403))
    ],
    # A subject-access export (POST with a reason): the ban officers only, not the safety officer.
    "subject_access": [
        (
            lambda: reverse("subject_access", args=[a_ban("active").person_id]),
            only(302, BAN_OFFICERS, 405, 403),
        )
    ],
    # Approval: never by the proposer (banofficer proposed every ban here).
    "ban_decide": [
        (
            lambda: reverse("ban_decide", args=[a_ban("proposed").pk]),
            only(302, ["safety", "security"], 405, 403),
        )
    ],
    "ban_appeal": [
        (
            lambda: reverse("ban_appeal", args=[a_ban("active").pk]),
            only(302, BAN_OFFICERS, 405, 403),
        )
    ],
    # An appeal: a third user, neither the proposer (banofficer) nor the approver (safety).
    "appeal_decide": [
        (
            lambda: reverse("appeal_decide", args=[a_ban("appealed").pk]),
            only(302, ["security"], 405, 403),
        )
    ],
    "flags": [(lambda: reverse("flags"), only(302, BAN_OFFICERS, 200, 403))],
    "flag": [(lambda: reverse("flag", args=[a_flag().pk]), only(302, BAN_OFFICERS, 200, 403))],
    "flag_decide": [
        (lambda: reverse("flag_decide", args=[a_flag().pk]), only(302, BAN_OFFICERS, 405, 403))
    ],
    "access_records": [(lambda: reverse("access_records"), only(302, ["auditor"], 200, 403))],
    # The league's exchange (docs/adr/0015): its routes answer only an exchange installation's
    # enrolled clubs, by signature; on a club's installation they are not there for anyone.
    "api:exchange_key": [(lambda: reverse("api:exchange_key"), expect(404, 404))],
    "api:exchange_publication_evaluate": [
        (lambda: reverse("api:exchange_publication_evaluate"), expect(404, 404), A_BATCH)
    ],
    "api:exchange_publication": [
        (lambda: reverse("api:exchange_publication"), expect(404, 404), {"bans": []})
    ],
    "api:exchange_published": [(lambda: reverse("api:exchange_published"), expect(404, 404))],
    "api:exchange_check": [
        (
            lambda: reverse("api:exchange_check"),
            expect(404, 404),
            {"fixture": "f", "holders": 1, "tickets": 1, "coming": 1},
        )
    ],
    "api:exchange_check_evaluate": [
        (lambda: reverse("api:exchange_check_evaluate", args=[1]), expect(404, 404), A_BATCH)
    ],
    "api:exchange_outcome": [
        (lambda: reverse("api:exchange_outcome", args=[1]), expect(404, 404), {"matched": 0})
    ],
    "api:exchange_against": [(lambda: reverse("api:exchange_against"), expect(404, 404))],
    "api:exchange_record": [(lambda: reverse("api:exchange_record"), expect(404, 404))],
    # The safety officer's page of the exchange's record of the club: the register's readers;
    # 404 here, where no exchange is configured.
    "league_record": [
        (lambda: reverse("league_record"), only(302, [*REGISTER, "liaison"], 404, 403))
    ],
    # A club's own: the register's readers see the exchange's record of checks against its bans,
    # the home club's ban officers check a fixture; 404 here, where no exchange is configured.
    "api:league_checks_against": [
        (
            lambda: reverse("api:league_checks_against"),
            only(401, [*REGISTER, "liaison"], 404, 403),
        )
    ],
    "api:league_check": [
        (
            lambda: reverse("api:league_check", args=[cup_tie().pk]),
            only(401, BAN_OFFICERS, 404, 403),
            {},
        )
    ],
    "api:league_check_tickets": [
        (
            lambda: reverse("api:league_check_tickets", args=[cup_tie().pk]),
            only(401, BAN_OFFICERS, 404, 403),
            {"tickets": ["T1"]},
        )
    ],
    # The fixture page's league check (its progress, and starting one): the home club's ban
    # officers; 404 here, where no exchange is configured.
    "league_fixture_check": [
        (
            lambda: reverse("league_fixture_check", args=[cup_tie().pk]),
            only(302, BAN_OFFICERS, 404, 403),
        )
    ],
    # The register's API: the same rules as its pages; reads need a reason (recorded).
    "api:register_bans": [
        (
            lambda: reverse("api:register_bans") + "?reason=Permission+table",
            only(401, [*REGISTER, "liaison"], 200, 403),
        )
    ],
    "api:register_person": [
        (
            lambda: (
                reverse("api:register_person", args=[a_ban("active").person_id])
                + "?reason=Permission+table"
            ),
            only(401, REGISTER, 200, 403),
        )
    ],
    "api:register_propose": [
        (lambda: reverse("api:register_propose"), only(401, BAN_OFFICERS, 201, 403), A_PROPOSAL)
    ],
    "api:register_decide": [
        (
            lambda: reverse("api:register_decide", args=[a_fresh_ban("proposed").pk]),
            only(401, ["safety", "security"], 200, 403),
            {"decision": "reject", "reason": "Permission table"},
        )
    ],
    "api:register_appeal": [
        (
            lambda: reverse("api:register_appeal", args=[a_fresh_ban("active").pk]),
            only(401, BAN_OFFICERS, 200, 403),
            {"reason": "Permission table"},
        )
    ],
    "api:register_appeal_decide": [
        (
            lambda: reverse("api:register_appeal_decide", args=[a_fresh_ban("appealed").pk]),
            only(401, ["security"], 200, 403),
            {"outcome": "upheld", "reason": "Permission table"},
        )
    ],
    # Reports: the post-match report, its exports and API for everyone working the match but
    # stewards and the away club; the season of the ground for the club's staff (not stewards).
    "match_report": [
        (
            lambda: reverse("match_report", args=[cup_tie().pk]),
            expect(302, 200, steward=403, liaison=403),
        )
    ],
    "match_report_pdf": [
        (
            lambda: reverse("match_report_pdf", args=[cup_tie().pk]),
            expect(302, 200, steward=403, liaison=403),
        )
    ],
    "match_export": [
        (
            lambda: reverse("match_export", args=[cup_tie().pk, "log", "csv"]),
            expect(302, 200, steward=403, liaison=403),
        ),
        (
            lambda: reverse("match_export", args=[cup_tie().pk, "scans", "json"]),
            expect(302, 200, steward=403, liaison=403),
        ),
        (
            lambda: reverse("match_export", args=[cup_tie().pk, "forged", "csv"]),
            expect(302, 200, steward=403, liaison=403),
        ),
    ],
    "season": [
        (
            lambda: reverse("season", args=["riverside-park"]),
            only(302, GROUND_STAFF, 200, 403),
        )
    ],
    "season_pdf": [
        (
            lambda: reverse("season_pdf", args=["riverside-park"]),
            only(302, GROUND_STAFF, 200, 403),
        )
    ],
    # Bans without names for the ground's staff; with names only for the register's readers.
    "ground_export": [
        (
            lambda: reverse("ground_export", args=["riverside-park", "bans", "csv"]),
            only(302, GROUND_STAFF, 200, 403),
        ),
        (
            lambda: (
                reverse("ground_export", args=["riverside-park", "bans", "json"])
                + "?reason=Season+return"
            ),
            only(302, REGISTER, 200, 403),
        ),
        (
            lambda: reverse("ground_export", args=["riverside-park", "season", "csv"]),
            only(302, GROUND_STAFF, 200, 403),
        ),
    ],
    "api:report_match": [
        (
            lambda: reverse("api:report_match", args=[cup_tie().pk]),
            expect(401, 200, steward=403, liaison=403),
        )
    ],
    "api:report_log": [
        (
            lambda: reverse("api:report_log", args=[cup_tie().pk]),
            expect(401, 200, steward=403, liaison=403),
        )
    ],
    "api:report_scans": [
        (
            lambda: reverse("api:report_scans", args=[cup_tie().pk]),
            expect(401, 200, steward=403, liaison=403),
        )
    ],
    "api:report_season": [
        (
            lambda: reverse("api:report_season", args=["riverside-park"]),
            only(401, GROUND_STAFF, 200, 403),
        )
    ],
    "api:report_bans": [
        (
            lambda: reverse("api:report_bans", args=["riverside-park"]),
            only(401, GROUND_STAFF, 200, 403),
        ),
        (
            lambda: reverse("api:report_bans", args=["riverside-park"]) + "?reason=Season+return",
            only(401, REGISTER, 200, 403),
        ),
    ],
    "casework_fixture": [
        (
            lambda: reverse("casework_fixture", args=[cup_tie().pk]),
            only(302, CASE_WORKERS, 200, 403),
        ),
        # The league match is not shared with the away club; the police still police it.
        (
            lambda: reverse("casework_fixture", args=[league_match().pk]),
            only(302, CASE_WORKERS, 200, 403),
        ),
    ],
    "evidence_locker": [
        (
            lambda: reverse("evidence_locker", args=[cup_tie().pk]),
            only(302, CASE_WORKERS, 200, 403),
        )
    ],
    "locker_evidence_add": [
        (
            lambda: reverse("locker_evidence_add", args=[cup_tie().pk]),
            only(302, CASE_WORKERS, 405, 403),
        )
    ],
    # An arrest from its log entry (issue 27): the form; recording it is the same right.
    "entry_arrest": [
        (
            lambda: reverse("entry_arrest", args=[cup_tie().pk, a_report().pk]),
            only(302, CASE_WORKERS, 200, 403),
        )
    ],
    "case": [(lambda: reverse("case", args=[a_case().pk]), only(302, CASE_WORKERS, 200, 403))],
    # The reason form first; the names only after it (tests/casework/test_who.py).
    "case_who": [
        (lambda: reverse("case_who", args=[a_case().pk]), only(302, CASE_WORKERS, 200, 403))
    ],
    # POST-only (opened with GET: those allowed get 405, everyone else 403).
    "case_subject_add": [
        (
            lambda: reverse("case_subject_add", args=[a_case().pk]),
            only(302, CASE_WORKERS, 405, 403),
        )
    ],
    "case_outcome": [
        (lambda: reverse("case_outcome", args=[a_case().pk]), only(302, CASE_WORKERS, 405, 403))
    ],
    "case_evidence_add": [
        (
            lambda: reverse("case_evidence_add", args=[a_case().pk]),
            only(302, CASE_WORKERS, 405, 403),
        )
    ],
    "case_close": [
        (lambda: reverse("case_close", args=[a_case().pk]), only(302, CASE_WORKERS, 405, 403))
    ],
    # A club ban is proposed by a ban officer only (the register's rule).
    "case_ban_propose": [
        (
            lambda: reverse("case_ban_propose", args=[a_case().pk]),
            only(302, BAN_OFFICERS, 405, 403),
        )
    ],
    "case_bundle": [
        (lambda: reverse("case_bundle", args=[a_case().pk]), only(302, CASE_WORKERS, 200, 403))
    ],
    "evidence_file": [(an_evidence_url, only(302, CASE_WORKERS, 200, 403))],
    "evidence_photo": [
        (lambda: a_locker_photo_url(block="S-L1"), only(302, CASE_WORKERS, 200, 403))
    ],
    "api:who_was_there": [(who_url, only(401, CASE_WORKERS, 200, 403), WHO)],
    # The count before the names: the same roles (it names nobody, so no reason is asked).
    "api:who_was_there_count": [(who_count_url, only(401, CASE_WORKERS, 200, 403), WHO_COUNT)],
    # The casework API (issue 27): the case workers, as on the pages.
    "api:case_list": [
        (
            lambda: reverse("api:case_list", args=[cup_tie().pk]),
            only(401, CASE_WORKERS, 200, 403),
        )
    ],
    "api:case_read": [
        (lambda: reverse("api:case_read", args=[a_case().pk]), only(401, CASE_WORKERS, 200, 403))
    ],
    "api:case_subjects": [
        (
            lambda: reverse("api:case_subjects", args=[a_case().pk]),
            only(401, CASE_WORKERS, 200, 403),
        )
    ],
    "api:case_outcomes": [
        (
            lambda: reverse("api:case_outcomes", args=[a_case().pk]),
            only(401, CASE_WORKERS, 200, 403),
        )
    ],
    "api:case_evidence": [
        (
            lambda: reverse("api:case_evidence", args=[a_case().pk]),
            only(401, CASE_WORKERS, 200, 403),
        )
    ],
    "api:case_outcome_record": [
        (
            lambda: reverse("api:case_outcome_record", args=[a_case().pk]),
            only(401, CASE_WORKERS, 201, 403),
            {"kind": "nfa", "note": "Permission table: no further action"},
        )
    ],
    # The same return sent again is accepted (its references are already recorded).
    "api:arrests_import": [
        (
            lambda: reverse("api:arrests_import", args=[cup_tie().pk]),
            only(401, CASE_WORKERS, 200, 403),
            {"arrests": [{"offence_group": "alcohol", "club": "away", "reference": "PT/1"}]},
        )
    ],
    # Steward deployment and pre-match checks (the deployment app). The board: the home club's
    # control-room staff and its auditor. POST-only routes are
    # opened with GET: those allowed get 405, everyone else 403.
    "deployment": [
        (lambda: reverse("deployment", args=[cup_tie().pk]), only(302, DEPLOYMENT, 200, 403))
    ],
    # The panel: the board for those who see deployment, the briefing's links for the other
    # readers of the plan (the police).
    "deployment_control_panel": [
        (
            lambda: reverse("deployment_control_panel", args=[cup_tie().pk]),
            expect(302, 200, steward=403, liaison=403),
        )
    ],
    "deployment_post": [
        (
            lambda: reverse("deployment_post", args=[cup_tie().pk]),
            only(302, ["safety", "loggist", "supervisor"], 405, 403),
        )
    ],
    "deployment_checks_prepare": [
        (
            lambda: reverse("deployment_checks_prepare", args=[cup_tie().pk]),
            only(302, ["safety", "loggist", "supervisor"], 405, 403),
        )
    ],
    "deployment_check_send_back": [
        (
            lambda: reverse("deployment_check_send_back", args=[cup_tie().pk, a_check().pk]),
            only(302, ["safety", "supervisor"], 405, 403),
        )
    ],
    # A check's photo: the board's readers and the steward who took it.
    "deployment_check_photo": [
        (
            lambda: reverse("deployment_check_photo", args=[cup_tie().pk, a_check_photo().pk]),
            only(302, [*DEPLOYMENT, "steward"], 200, 403),
        )
    ],
    # Marking the plan ready, and overriding a critical check: the safety officer only.
    "deployment_ready": [
        (lambda: reverse("deployment_ready", args=[cup_tie().pk]), only(302, PLANNERS, 405, 403))
    ],
    # The steward's phone: stewards and supervisors.
    "deployment_steward_panel": [
        (
            lambda: reverse("deployment_steward_panel", args=[cup_tie().pk]),
            only(302, STEWARDS, 200, 403),
        )
    ],
    "deployment_check_in": [
        (
            lambda: reverse("deployment_check_in", args=[cup_tie().pk]),
            only(302, STEWARDS, 405, 403),
        )
    ],
    "deployment_check_record": [
        (
            lambda: reverse("deployment_check_record", args=[cup_tie().pk, a_check().pk]),
            only(302, STEWARDS, 405, 403),
        )
    ],
    # The deployment API: the same rules as the pages. The steward and the supervisor are
    # posted to the away section first, so each may check in and record a check there.
    "api:deployment_board": [
        (
            lambda: reverse("api:deployment_board", args=[cup_tie().pk]),
            only(401, DEPLOYMENT, 200, 403),
        )
    ],
    "api:deployment_check_in": [
        (
            lambda: reverse("api:deployment_check_in", args=[stewards_posted().pk]),
            only(401, STEWARDS, 201, 403),
            {},
        )
    ],
    "api:deployment_check_result": [
        (
            lambda: reverse(
                "api:deployment_check_result", args=[stewards_posted().pk, an_away_check().pk]
            ),
            only(401, STEWARDS, 201, 403),
            {"outcome": "pass"},
        )
    ],
    "api:deployment_plan_ready": [
        (
            lambda: reverse("api:deployment_plan_ready", args=[a_signed_off_plan().fixture_id]),
            only(401, PLANNERS, 201, 403),
            {"override_reason": "Checks done by radio"},
        )
    ],
    # The briefing carries the plan: whoever reads the plan (not stewards, not the away club).
    "briefing": [
        (
            lambda: reverse("briefing", args=[cup_tie().pk]),
            expect(302, 200, steward=403, liaison=403),
        )
    ],
    "briefing_pdf": [
        (
            lambda: reverse("briefing_pdf", args=[cup_tie().pk]),
            expect(302, 200, steward=403, liaison=403),
        )
    ],
    # Devices: the organisation's safety officer (the liaison is the away club's: its own list),
    # and only the home club's safety officer revokes the home club's turnstile.
    "devices": [(lambda: reverse("devices"), only(302, ["safety", "liaison"], 200, 403))],
    "device_revoke": [(a_device_revoke_url, only(302, ["safety"], 200, 403))],
    # The decision log. POST-only routes are opened with GET: those allowed get 405.
    "decisions": [
        (lambda: reverse("decisions", args=[cup_tie().pk]), expect(302, 200, **DECISION_READERS))
    ],
    "decisions_pdf": [
        (
            lambda: reverse("decisions_pdf", args=[cup_tie().pk]),
            expect(302, 200, **DECISION_READERS),
        )
    ],
    "decisions_banner": [
        (
            lambda: reverse("decisions_banner", args=[cup_tie().pk]),
            expect(302, 200, **DECISION_READERS),
        )
    ],
    "decisions_amend": [
        (
            lambda: reverse("decisions_amend", args=[cup_tie().pk, a_decision().pk]),
            only(302, DECISION_LOGGERS, 200, 403),
        )
    ],
    "decisions_review": [
        (
            lambda: reverse("decisions_review", args=[cup_tie().pk, a_decision().pk]),
            only(302, DECISION_LOGGERS, 405, 403),
        )
    ],
    "decisions_radio": [
        (
            lambda: reverse("decisions_radio", args=[cup_tie().pk]),
            only(302, RADIO_SWITCHERS, 405, 403),
        )
    ],
    # Closing a stand: its page, the page's live part, the control room's panel and alarm (the
    # control room's people see them; only a commander closes: tests/test_stand_evacuation.py).
    **{
        name: [
            (
                lambda name=name, stand=stand: reverse(name, args=[cup_tie().pk, *stand()]),
                expect(302, 200, **DECISION_READERS),
            )
        ]
        for name, stand in (
            ("decisions_stand_evacuation", lambda: [a_stand().pk]),
            ("decisions_stand_evacuation_live", lambda: [a_stand().pk]),
            ("decisions_stands_panel", lambda: []),
            ("decisions_stands_alarm", lambda: []),
        )
    },
    "major_incident": [
        (
            lambda: reverse("major_incident", args=[cup_tie().pk]),
            expect(302, 200, **DECISION_READERS),
        )
    ],
    "major_incident_declare": [
        (
            lambda: reverse("major_incident_declare", args=[cup_tie().pk]),
            only(302, COMMANDERS, 200, 403),
        )
    ],
    "methane_correct": [
        (
            lambda: reverse("methane_correct", args=[cup_tie().pk, a_methane_report().pk]),
            only(302, COMMANDERS, 200, 403),
        )
    ],
    # The steward's phone: the radio-down banner.
    "decisions_steward_banner": [
        (
            lambda: reverse("decisions_steward_banner", args=[cup_tie().pk]),
            only(302, STEWARDS, 200, 403),
        )
    ],
    "api:decision_list": [
        (
            lambda: reverse("api:decision_list", args=[cup_tie().pk]),
            expect(401, 200, **DECISION_READERS),
        )
    ],
    "api:decision_record": [
        (
            lambda: reverse("api:decision_record", args=[cup_tie().pk]),
            only(401, DECISION_LOGGERS, 201, 403),
            A_DECISION,
        )
    ],
    "api:decision_amend": [
        (
            lambda: reverse("api:decision_amend", args=[cup_tie().pk, a_decision().pk]),
            only(401, DECISION_LOGGERS, 201, 403),
            {**A_DECISION, "reason": "Crowd still there"},
        )
    ],
    "api:decision_review": [
        (
            lambda: reverse("api:decision_review", args=[cup_tie().pk, a_decision(True).pk]),
            only(401, DECISION_LOGGERS, 201, 403),
            {"note": "Stands"},
        )
    ],
    "api:radio_down": [
        (
            lambda: reverse("api:radio_down", args=[radio_in_state(down=False).pk]),
            only(401, RADIO_SWITCHERS, 201, 403),
            {"decision_maker": "safety"},
        )
    ],
    "api:radio_up": [
        (
            lambda: reverse("api:radio_up", args=[radio_in_state(down=True).pk]),
            only(401, RADIO_SWITCHERS, 201, 403),
            {"decision_maker": "safety"},
        )
    ],
    # The communications check (deployment): the board's readers see it; the control room sends.
    "deployment_comms_check": [
        (
            lambda: reverse("deployment_comms_check", args=[cup_tie().pk]),
            only(302, ["safety", "loggist", "supervisor"], 405, 403),
        )
    ],
    "api:deployment_comms_check": [
        (
            lambda: reverse("api:deployment_comms_check", args=[cup_tie().pk]),
            only(401, DEPLOYMENT, 200, 403),
        )
    ],
    "api:deployment_comms_check_send": [
        (
            lambda: reverse("api:deployment_comms_check_send", args=[stewards_checked_in().pk]),
            only(401, ["safety", "loggist", "supervisor"], 201, 403),
            {},
        )
    ],
    # The admin site is for superusers only; no role of the cast is one.
    "admin:*": [(lambda: reverse("admin:index"), expect(302, 302))],
    # Supporters' reports (the supporters app). The seat page and a report's status page are
    # public (no account: the QR code's address); the text line's webhook is public too, guarded
    # by its signature (POST-only: a GET is 405 for all). The queue, its actions, a reporter's
    # contact and photo: the home club's safety officer and control room; the seats' QR sheets
    # likewise; a phone's subject-access export: the register's exporters (POST-only).
    "supporters_seat": [
        (lambda: reverse("supporters_seat", args=[a_seat_code()]), expect(200, 200))
    ],
    "supporters_status": [
        (
            lambda: reverse("supporters_status", args=[a_supporter_report().reference]),
            expect(200, 200),
        )
    ],
    "supporters_sms": [
        (lambda: reverse("supporters_sms", args=["riverside-park"]), expect(405, 405))
    ],
    "supporters_panel": [
        (
            lambda: reverse("supporters_panel", args=[cup_tie().pk]),
            only(302, SUPPORTER_TRIAGERS, 200, 403),
        )
    ],
    "supporters_item_action": [
        (
            lambda: reverse(
                "supporters_item_action",
                args=[cup_tie().pk, a_supporter_report().item_id, "accept"],
            ),
            only(302, SUPPORTER_TRIAGERS, 405, 403),
        )
    ],
    "supporters_contact": [
        (
            lambda: reverse("supporters_contact", args=[cup_tie().pk, a_supporter_report().pk]),
            only(302, SUPPORTER_TRIAGERS, 200, 403),
        )
    ],
    "supporters_photo": [
        (
            lambda: reverse("supporters_photo", args=[cup_tie().pk, a_supporter_report().pk]),
            only(302, SUPPORTER_TRIAGERS, 200, 403),
        )
    ],
    "supporters_seat_sheet": [
        (
            lambda: reverse("supporters_seat_sheet", args=["riverside-park", "S-L1"]),
            only(302, SUPPORTER_TRIAGERS, 200, 403),
        )
    ],
    "supporters_seat_labels": [
        (
            lambda: reverse("supporters_seat_labels", args=["riverside-park"]),
            only(302, SUPPORTER_TRIAGERS, 200, 403),
        )
    ],
    "supporters_seat_labels_download": [
        (  # no such job: the one who may print is told so, the others are refused first
            lambda: reverse("supporters_seat_labels_download", args=["riverside-park", 999999]),
            only(302, SUPPORTER_TRIAGERS, 404, 403),
        )
    ],
    "supporters_subject_access": [
        (
            lambda: reverse("supporters_subject_access"),
            only(302, ["banofficer", "security"], 405, 403),
        )
    ],
}


def route_names(patterns: list, namespace: str = "") -> set[str]:
    names: set[str] = set()
    for entry in patterns:
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            names |= route_names(entry.url_patterns, inner)
        elif isinstance(entry, URLPattern) and entry.name:
            names.add(f"{namespace}{entry.name}")
    return names


def table_key(name: str) -> str:
    return "admin:*" if name.startswith("admin:") else name


def test_every_route_has_a_row() -> None:
    routes = {table_key(name) for name in route_names(get_resolver().url_patterns)}
    assert routes - set(TABLE) == set(), "routes without a permission row"
    assert set(TABLE) - routes == set(), "rows for routes that no longer exist"


def test_unnamed_routes_do_not_exist() -> None:
    def unnamed(patterns: list) -> list[str]:
        found = []
        for entry in patterns:
            if isinstance(entry, URLResolver):
                if entry.namespace != "admin":
                    found += unnamed(entry.url_patterns)
            elif not entry.name:
                found.append(str(entry.pattern))
        return found

    assert unnamed(get_resolver().url_patterns) == []


def send_row(client: Client, route: str, url: str, body: list) -> Any:
    """A row's request: its own method (METHODS), a multipart upload made fresh each time, a
    JSON body, or a GET."""
    if route in METHODS:
        send = getattr(client, METHODS[route])
        return send(url, body[0] if body else None, content_type="application/json")
    if body and callable(body[0]):
        return client.post(url, body[0]())
    if body:
        return client.post(url, body[0], content_type="application/json")
    return client.get(url)


@pytest.mark.parametrize("route", sorted(TABLE))
def test_route_status_for_every_role(
    route: str, match_day_with_register, no_second_factor, client_for
) -> None:
    wrong = []
    for role in ROLES:
        client = Client() if role == "anonymous" else client_for(role)
        for url_of, expected, *body in TABLE[route]:
            url = url_of()
            response = send_row(client, route, url, body)
            if response.status_code != expected[role]:
                method = METHODS.get(route, "POST" if body else "GET").upper()
                wrong.append(
                    f"{role} {method} {url}: {response.status_code}, expected {expected[role]}"
                )
    assert wrong == []


def api_operations() -> list[tuple[str, str, frozenset[str]]]:
    """(route name, path, methods) of every django-ninja operation."""
    from safeground.api import api

    found = []
    for _prefix, router in api._routers:
        for path, view in router.path_operations.items():
            for operation in view.operations:
                found.append((f"api:{operation.url_name}", path, frozenset(operation.methods)))
    return found


def test_every_api_operation_is_tried_with_its_own_method() -> None:
    """Two operations may share a path (GET and PATCH /fixtures/{id}): each row must send the
    method of the operation it names, or the row tests its neighbour."""
    operations = api_operations()
    assert len(operations) > 40
    wrong = []
    for name, path, methods in operations:
        rows = TABLE[name]
        sent = METHODS.get(name, "post" if any(len(row) > 2 for row in rows) else "get").upper()
        if sent not in methods:
            wrong.append(f"{name} ({path}): the table sends {sent}, the route takes {set(methods)}")
    assert wrong == []


@pytest.mark.usefixtures("no_second_factor")
def test_a_method_no_operation_takes_is_refused_on_every_api_path(client_for) -> None:
    by_path: dict[str, set[str]] = {}
    for _name, path, methods in api_operations():
        by_path.setdefault(path, set()).update(methods)
    client = client_for("safety")
    wrong = []
    for path, methods in by_path.items():
        url = "/api" + path.replace("{fixture_id}", "1").replace("{entry_id}", "1")
        url = url.replace("{", "").replace("}", "")
        for method in {"GET", "POST", "PUT", "PATCH", "DELETE"} - methods:
            response = getattr(client, method.lower())(url, {}, content_type="application/json")
            if response.status_code != 405:
                wrong.append(f"{method} {url}: {response.status_code}")
    assert wrong == []


DEVICE_ROUTES = {"api:entry_scan", "api:entry_bundle", "api:entry_bundle_key",
                 "api:entry_offline_scans", "api:device_whoami"}  # fmt: skip


@pytest.mark.parametrize("profile", ["turnstile", "scanner"])
def test_a_device_key_opens_its_routes_and_nothing_else(
    profile: str, match_day_with_register
) -> None:
    """The table's rows again, with a device key instead of a login: the device routes let it in
    (whatever they then answer), every other API route answers 401 and every page sends it to
    the login: a key is not a user."""
    _, key = factories.device(match_day_with_register.cast.home, profile=profile)
    client = Client(headers={"X-Device-Key": key})
    wrong = []
    for route, rows in TABLE.items():
        for url_of, expected, *body in rows:
            url = url_of()
            response = send_row(client, route, url, body)
            if route in DEVICE_ROUTES:
                ok = response.status_code not in {401, 403}
            else:
                ok = response.status_code == expected["anonymous"]
            if not ok:
                wrong.append(f"{profile} {url}: {response.status_code}")
    assert wrong == []
