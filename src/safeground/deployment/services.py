"""Writes for match-day deployment: posting a steward (through the log's own service), checking
in, preparing the pre-match checks, recording and sending back a result, marking the plan ready.

Each is one transaction; each change others must see goes out live on commit.
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from safeground import clock
from safeground.accounts.models import User
from safeground.accounts.permissions import (
    can_check_in,
    can_mark_plan_ready,
    can_record_any_check,
    can_send_check_back,
)
from safeground.errors import Forbidden, SafegroundError, too_long
from safeground.incidents.photos import photo_refusal, photo_sha256
from safeground.incidents.selectors import current_posts, post_label, steward_post
from safeground.live.catalogue import CHECK_RESULT, STEWARD_CHECKIN
from safeground.live.events import Audience, publish
from safeground.matches.models import Fixture
from safeground.matches.selectors import plan_current, plan_is_signed_off
from safeground.stored_files import file_then_record

from .checklist import checklist_for
from .comms import comms_state
from .models import CheckIn, CheckResult, MatchCheck, PlanReady
from .selectors import check_states, completion, post_place_filter


class DeploymentError(SafegroundError):
    """A check-in, a check or a ready mark refused; `field` names what is wrong."""

    code = "deployment_refused"


class DeploymentConflict(DeploymentError):
    """Well formed, but refused by the state of things (409)."""

    status = 409


class PlanNotReady(SafegroundError):
    """Critical checks failed or not done, and no override reason was given."""

    code = "plan_not_ready"
    status = 409


@transaction.atomic
def steward_check_in(*, fixture: Fixture, steward: User) -> CheckIn:
    """The steward is at their post. Checking in again at the same post changes nothing."""
    if not can_check_in(steward, fixture):
        raise Forbidden("steward", _("only stewards and supervisors check in"))
    post = steward_post(fixture, steward)
    if post is None:
        raise DeploymentConflict(
            "post", _("you have no post at this match yet: ask the control room")
        )
    existing = CheckIn.objects.filter(post=post).first()
    if existing is not None:
        return existing
    try:
        with transaction.atomic():  # a double tap from two devices: the unique post decides
            check_in = CheckIn.objects.create(
                fixture=fixture, post=post, steward=steward, checked_in_at=timezone.now()
            )
    except IntegrityError:
        return CheckIn.objects.get(post=post)
    publish(
        fixture_id=fixture.pk,
        type=STEWARD_CHECKIN,
        data={
            "steward": steward.username,
            "name": str(steward),
            "post": post_label(post),
            "at": clock.iso(check_in.checked_in_at),
        },
        # The control room (home staff), and the steward's own devices.
        audience=Audience(home_only=True, user_ids=frozenset({steward.pk})),
    )
    return check_in


@transaction.atomic
def checks_prepare(*, fixture: Fixture) -> list[MatchCheck]:
    """The ground's checklist at every place of this match: each item at each zone the match
    uses, each gate or each concourse. Run again (a new gate, a changed layout), it adds only
    what is missing. A bad checklist file is refused whole (ChecklistRefused)."""
    checklist = checklist_for(fixture.ground)
    Fixture.objects.select_for_update().filter(pk=fixture.pk).first()  # one preparer at a time
    places: dict[str, list[Any]] = {
        "zone": [fz.zone for fz in fixture.zones.select_related("zone").order_by("zone__code")],
        "gate": list(fixture.ground.gates.order_by("code")),
        "concourse": list(fixture.ground.concourses.order_by("code")),
    }
    have = set(
        MatchCheck.objects.filter(fixture=fixture).values_list(
            "item", "zone_id", "gate_id", "concourse_id"
        )
    )
    now = timezone.now()
    made = []
    for item in checklist.items:
        for place in places[item.at]:
            ids = tuple(place.pk if item.at == kind else None for kind in places)
            if (item.code, *ids) in have:
                continue
            made.append(
                MatchCheck(
                    fixture=fixture,
                    item=item.code,
                    name=item.name,
                    area=item.area,
                    critical=item.critical,
                    created_at=now,
                    **{item.at: place},
                )
            )
    return MatchCheck.objects.bulk_create(made)


def _posted_at(fixture: Fixture, check: MatchCheck) -> set[int]:
    """Stewards whose current post is the check's place (they see it done on their phones)."""
    place = post_place_filter(check)
    return {
        steward_id
        for steward_id, post in current_posts(fixture).items()
        if post_place_filter(post) == place
    }


def _publish_result(result: CheckResult) -> None:
    check = result.match_check
    done = completion(check_states(check.fixture))
    publish(
        fixture_id=check.fixture_id,
        type=CHECK_RESULT,
        data={
            "check": check.pk,
            "item": check.item,
            "name": check.name,
            "place": check.place.name,  # a frame for every reader: the English name
            "critical": check.critical,
            "outcome": result.outcome,
            "by": str(result.by),
            "at": clock.iso(result.at),
            "note": result.note,
            "done": done.done,
            "total": done.total,
            "open_critical": len(done.open_critical),
        },
        audience=Audience(
            home_only=True,
            user_ids=frozenset(_posted_at(check.fixture, check) | {result.by_id}),
        ),
    )


def _photo_fields(photo: Any) -> dict[str, Any]:
    if photo is None:
        return {}
    refused = photo_refusal(photo)
    if refused:
        raise DeploymentError("photo", refused)
    sha256 = photo_sha256(photo)
    return {"photo": photo, "photo_sha256": sha256, "photo_type": photo.content_type}


def check_record(
    *, check: MatchCheck, by: User, outcome: str, note: str = "", photo: Any = None
) -> CheckResult:
    """A check done at the post: passed or failed (a failure says what is wrong), with an
    optional photo kept with its SHA-256. A steward records the checks at their own post; a
    supervisor at any. A photo is written first, then the result in its own transaction, the
    photo removed if that fails (stored_files): called outside any transaction."""
    fixture = check.fixture
    if not can_check_in(by, fixture):
        raise Forbidden("by", _("only stewards and supervisors record checks"))
    if outcome not in (CheckResult.Outcome.PASS, CheckResult.Outcome.FAIL):
        raise DeploymentError("outcome", _("pass or fail"))
    note = note.strip()
    if outcome == CheckResult.Outcome.FAIL and not note:
        raise DeploymentError("note", _("say what is wrong, so it can be put right"))
    if len(note) > 2000:
        raise DeploymentError("note", too_long(len(note), 2000))
    if not can_record_any_check(by, fixture):
        post = steward_post(fixture, by)
        if post is None or post_place_filter(post) != post_place_filter(check):
            raise DeploymentError(
                "check",
                _("'%(check)s' at %(place)s is not at your post")
                % {"check": check.name, "place": check.place},
            )
    fields = _photo_fields(photo)

    def record(stored: str | None) -> CheckResult:
        kept = fields if stored is None else {**fields, "photo": stored}
        result = CheckResult.objects.create(
            match_check=check, outcome=outcome, note=note, by=by, at=timezone.now(), **kept
        )
        _publish_result(result)
        return result

    if photo is None:
        with transaction.atomic():
            return record(None)
    return file_then_record(
        storage=CheckResult.photo.field.storage,
        name=CheckResult.photo.field.generate_filename(CheckResult(), photo.name),
        content=photo,
        record=record,
    )


@transaction.atomic
def check_send_back(*, check: MatchCheck, by: User, note: str) -> CheckResult:
    """A supervisor sends a done check back to be verified again, saying why."""
    if not can_send_check_back(by, check.fixture):
        raise Forbidden("by", _("a supervisor or the safety officer sends a check back"))
    note = note.strip()
    if not note:
        raise DeploymentError("note", _("say what to look at again"))
    if len(note) > 2000:
        raise DeploymentError("note", too_long(len(note), 2000))
    latest = check.results.order_by("-at", "-pk").first()
    if latest is None or latest.outcome == CheckResult.Outcome.RECHECK:
        raise DeploymentError(
            "check",
            _("'%(check)s' at %(place)s is not done yet")
            % {"check": check.name, "place": check.place},
        )
    result = CheckResult.objects.create(
        match_check=check, outcome=CheckResult.Outcome.RECHECK, note=note, by=by, at=timezone.now()
    )
    _publish_result(result)
    return result


@transaction.atomic
def plan_mark_ready(*, fixture: Fixture, by: User, override_reason: str = "") -> PlanReady:
    """The safety officer marks the current, signed-off plan ready. A critical check failed,
    sent back or not done (or no checks prepared) refuses it, unless they override with a
    reason; the reason and the checks it overrode are kept."""
    if not can_mark_plan_ready(by, fixture):
        raise Forbidden("by", _("only the safety officer marks the plan ready"))
    Fixture.objects.select_for_update().filter(pk=fixture.pk).first()  # one mark at a time
    plan = plan_current(fixture)
    if plan is None:
        raise DeploymentConflict("plan", _("there is no plan yet"))
    if not plan_is_signed_off(plan):
        raise DeploymentConflict(
            "plan",
            _("version %(number)s is not signed off by both yet") % {"number": plan.number},
        )
    done = completion(check_states(fixture))
    reason = override_reason.strip()
    if len(reason) > 2000:
        raise DeploymentError("override_reason", too_long(len(reason), 2000))
    problems = [s.summary() for s in done.open_critical]
    comms = comms_state(fixture)
    if not comms.passed:
        problems.append(comms.summary())  # the radio check is critical too
    if not reason:
        if not done.prepared:
            raise PlanNotReady("checks", "the pre-match checks are not prepared yet")
        if problems:
            listed = "; ".join(f"{p['name']} at {p['place']}" for p in problems[:5])
            more = f" and {len(problems) - 5} more" if len(problems) > 5 else ""
            raise PlanNotReady(
                "override_reason",
                f"{len(problems)} critical checks failed or not done ({listed}{more}): "
                "put them right, or override with a reason",
            )
    overriding = bool(problems) or not done.prepared
    return PlanReady.objects.create(
        fixture=fixture,
        version=plan,
        by=by,
        at=timezone.now(),
        override_reason=reason if overriding else "",  # nothing to override: no reason kept
        open_critical=problems,
    )
