"""Every write about clubs and fixtures."""

from collections.abc import Mapping
from datetime import datetime

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from safeground.accounts.models import Organisation, User
from safeground.accounts.permissions import plan_sign_roles
from safeground.errors import Forbidden, SafegroundError
from safeground.venues.models import Ground, Layout, Zone

from .fixture_fields import FixtureError, FixtureFields, FixtureNotFound
from .models import (
    Club,
    Competition,
    Fixture,
    FixtureShare,
    FixtureZone,
    PlanSignOff,
    PlanVersion,
    RiskAssessment,
    ShareRecord,
)
from .plan import first_aid_computed, stewards_computed
from .policy import Policy, policy_current
from .risk import assess


def club_ensure(
    *, name: str, short_name: str = "", organisation: Organisation | None = None
) -> Club:
    club, _ = Club.objects.get_or_create(
        name=name, defaults={"short_name": short_name or name, "organisation": organisation}
    )
    return club


def competition_ensure(*, name: str) -> Competition:
    return Competition.objects.get_or_create(name=name)[0]


@transaction.atomic
def fixture_create(
    *,
    ground: Ground,
    home_club: Club,
    away_club: Club,
    competition: Competition,
    kickoff: datetime,
    stage: str = "",
    away_allocation: int = 0,
    zones: Mapping[str, str] | None = None,
    layout: Layout | None = None,
    shares: Mapping[Organisation, str],
    by: User | None = None,
) -> Fixture:
    """Make a fixture with its zone layout (one of the ground's layouts, or ground zone code ->
    use) and who works it; each share is recorded."""
    if home_club == away_club:
        raise FixtureError("home_club", _("a club cannot play itself"))
    fixture = Fixture.objects.create(
        ground=ground,
        home_club=home_club,
        away_club=away_club,
        competition=competition,
        stage=stage,
        kickoff=kickoff,
        away_allocation=away_allocation,
        layout=layout,
    )
    _zones_set(fixture, zones=zones, layout=layout)
    for organisation, purpose in shares.items():
        fixture_share(fixture=fixture, organisation=organisation, purpose=purpose, by=by)
    return fixture


def _zones_set(fixture: Fixture, *, zones: Mapping[str, str] | None, layout: Layout | None) -> None:
    if layout is not None:
        if layout.ground_id != fixture.ground_id:
            raise FixtureError(
                "layout",
                _("%(layout)s is not a layout of %(ground)s")
                % {"layout": layout.name, "ground": fixture.ground.name},
            )
        zones = {code: use for code, use in layout.zones.values_list("zone__code", "use")}
    if not zones:
        raise FixtureError("layout", _("choose one of the ground's layouts"))
    found = {z.code: z for z in Zone.objects.filter(ground=fixture.ground, code__in=zones)}
    unknown = sorted(set(zones) - set(found))
    if unknown:
        raise FixtureError(
            "zones",
            _("%(zones)s not at %(ground)s")
            % {"zones": ", ".join(unknown), "ground": fixture.ground.name},
        )
    FixtureZone.objects.filter(fixture=fixture).delete()
    FixtureZone.objects.bulk_create(
        FixtureZone(fixture=fixture, zone=found[code], use=use) for code, use in zones.items()
    )


def fixture_kickoff_delay(*, fixture: Fixture, minutes: int) -> None:
    """The kick-off put back `minutes` from the planned one, in the transaction of the commander's
    decision that says why (decisions.services); 0 restores the planned kick-off."""
    Fixture.objects.filter(pk=fixture.pk).update(kickoff_delay=minutes)
    fixture.kickoff_delay = minutes


@transaction.atomic
def fixture_share(
    *, fixture: Fixture, organisation: Organisation, purpose: str, by: User | None
) -> FixtureShare:
    """Let an organisation work the fixture (the police force, the away club); recorded."""
    if organisation.pk == fixture.ground.organisation_id:
        raise FixtureError(
            "shared_with",
            _("%(organisation)s is the home club already") % {"organisation": organisation.name},
        )
    if purpose not in FixtureShare.Purpose.values:
        raise FixtureError(
            "purpose",
            _("must be one of %(values)s") % {"values": ", ".join(FixtureShare.Purpose.values)},
        )
    share, created = FixtureShare.objects.get_or_create(
        fixture=fixture, organisation=organisation, defaults={"purpose": purpose}
    )
    if created:
        ShareRecord.objects.create(
            fixture=fixture,
            organisation=organisation,
            action=ShareRecord.Action.SHARED,
            purpose=purpose,
            by=by,
            at=timezone.now(),
        )
    return share


@transaction.atomic
def fixture_unshare(*, fixture: Fixture, organisation: Organisation, by: User | None) -> None:
    """The organisation no longer sees the fixture; recorded."""
    share = FixtureShare.objects.filter(fixture=fixture, organisation=organisation).first()
    if share is None:
        raise FixtureNotFound(
            "shared_with",
            _("%(fixture)s is not shared with %(organisation)s")
            % {"fixture": fixture, "organisation": organisation.name},
        )
    share.delete()
    ShareRecord.objects.create(
        fixture=fixture,
        organisation=organisation,
        action=ShareRecord.Action.UNSHARED,
        purpose=share.purpose,
        by=by,
        at=timezone.now(),
    )


def _shares_set(fixture: Fixture, shares: Mapping[Organisation, str], by: User | None) -> None:
    current = {
        share.organisation_id: share for share in FixtureShare.objects.filter(fixture=fixture)
    }
    wanted = {organisation.pk: organisation for organisation in shares}
    for organisation_id, share in current.items():
        if organisation_id not in wanted:
            fixture_unshare(fixture=fixture, organisation=share.organisation, by=by)
    for organisation_id, organisation in wanted.items():
        if organisation_id not in current:
            fixture_share(
                fixture=fixture, organisation=organisation, purpose=shares[organisation], by=by
            )


@transaction.atomic
def fixture_add(*, ground: Ground, fields: FixtureFields, by: User | None) -> Fixture:
    """A fixture the club sets up (page, command, season file, API), from checked fields."""
    home = ground.organisation
    if fields.layout is None:
        raise FixtureError("layout", _("choose one of the ground's layouts"))
    return fixture_create(
        ground=ground,
        home_club=club_ensure(name=home.name, organisation=home),
        away_club=club_ensure(name=fields.opponent),
        competition=competition_ensure(name=fields.competition),
        kickoff=fields.kickoff,
        stage=fields.stage,
        away_allocation=fields.away_allocation,
        layout=fields.layout,
        shares=fields.shares,
        by=by,
    )


@transaction.atomic
def fixture_edit(*, fixture: Fixture, fields: FixtureFields, by: User | None) -> Fixture:
    """Change a fixture to the checked fields: its zones follow a new layout, and each share
    added or removed is recorded."""
    away_club = club_ensure(name=fields.opponent)
    if away_club == fixture.home_club:
        raise FixtureError("opponent", _("a club cannot play itself"))
    fixture.away_club = away_club
    fixture.competition = competition_ensure(name=fields.competition)
    fixture.stage = fields.stage
    fixture.kickoff = fields.kickoff
    fixture.away_allocation = fields.away_allocation
    if fields.layout is not None and fields.layout.pk != fixture.layout_id:
        fixture.layout = fields.layout
        _zones_set(fixture, zones=None, layout=fields.layout)
    fixture.save()
    _shares_set(fixture, fields.shares, by)
    return fixture


@transaction.atomic
def fixtures_import(
    *, ground: Ground, fixtures: list[FixtureFields], by: User | None
) -> list[Fixture]:
    """A season's checked fixtures, all written or none."""
    return [fixture_add(ground=ground, fields=fields, by=by) for fields in fixtures]


# --- risk assessment ----------------------------------------------------------------------------


@transaction.atomic
def risk_assess(
    *, fixture: Fixture, policy: Policy | None = None, by: User | None = None
) -> RiskAssessment:
    """Assess the fixture now under `policy` (the configured one by default) and keep it."""
    policy = policy or policy_current()
    result = assess(fixture, policy)
    return RiskAssessment.objects.create(
        fixture=fixture,
        category=result.category,
        meaning=result.meaning,
        meanings=result.meanings,
        score=result.score,
        summary=result.summary,
        factors=result.factors_json(),
        policy_path=policy.path,
        policy_sha256=policy.sha256,
        assessed_at=timezone.now(),
        assessed_by=by,
    )


def risk_assessment_current(*, fixture: Fixture) -> RiskAssessment:
    """The fixture's assessment: the latest kept one, made now if there is none or if the
    fixture is still to be played and the policy has changed since (a played match keeps the
    category it was worked under)."""
    latest = fixture.assessments.order_by("-assessed_at", "-pk").first()
    if latest is not None and fixture.kickoff <= timezone.now():
        return latest
    policy = policy_current()
    if latest is not None and latest.policy_sha256 == policy.sha256:
        return latest
    return risk_assess(fixture=fixture, policy=policy)


def risk_reassess_open(*, policy: Policy | None = None) -> list[RiskAssessment]:
    """Assess again every fixture still to be played whose latest assessment was made under
    another policy (or that has none); returns the new assessments, earliest kick-off first."""
    policy = policy or policy_current()
    made = []
    for fixture in Fixture.objects.filter(kickoff__gt=timezone.now()).select_related(
        "ground", "home_club", "away_club", "competition"
    ):
        latest = fixture.assessments.order_by("-assessed_at", "-pk").first()
        if latest is None or latest.policy_sha256 != policy.sha256:
            made.append(risk_assess(fixture=fixture, policy=policy))
    return made


# --- the match plan -----------------------------------------------------------------------------


class PlanError(SafegroundError):
    """A plan change or signature refused; `field` names what is wrong."""

    code = "plan_refused"


class PlanChanged(SafegroundError):
    """The plan has a newer version than the one the change or signature was made on."""

    code = "plan_changed"
    status = 409


def _locked(fixture: Fixture, based_on: int | None) -> PlanVersion | None:
    """Lock the fixture (one plan change at a time) and check `based_on` is the latest."""
    Fixture.objects.select_for_update().filter(pk=fixture.pk).first()
    latest = fixture.plan_versions.order_by("-number").first()
    current = latest.number if latest else None
    if based_on != current:
        raise PlanChanged(
            "version",
            _("the plan is at version %(current)s now, not %(based_on)s: open it again")
            % {"current": current, "based_on": based_on}
            if current
            else _("there is no plan yet"),
        )
    return latest


@transaction.atomic
def plan_generate(*, fixture: Fixture, by: User, based_on: int | None = None) -> PlanVersion:
    """A new version of the plan as the policy sets it for the fixture's current category."""
    latest = _locked(fixture, based_on)
    assessment = risk_assessment_current(fixture=fixture)
    policy = policy_current()
    plan = policy.plans.get(assessment.category)
    if plan is None:
        raise PlanError(
            "category",
            _("the policy has no plan for category %(category)s")
            % {"category": assessment.category},
        )
    stewards = stewards_computed(fixture, plan)
    return PlanVersion.objects.create(
        fixture=fixture,
        number=(latest.number + 1) if latest else 1,
        assessment=assessment,
        category=assessment.category,
        measures=dict(plan.measures),
        stewards=stewards,
        first_aid=first_aid_computed(sum(row["capacity"] for row in stewards), policy.first_aid),
        communications={"primary": plan.primary, "fallback": plan.fallback},
        note=f"Made from category {assessment.category} by the policy",
        created_by=by,
        created_at=timezone.now(),
    )


@transaction.atomic
def plan_revise(
    *,
    fixture: Fixture,
    by: User,
    based_on: int,
    stewards: Mapping[str, int] | None = None,
    measures: Mapping[str, str] | None = None,
    communications: Mapping[str, str] | None = None,
    first_aiders: int | None = None,
    note: str = "",
) -> PlanVersion:
    """A new version with the safety officer's changes; it needs both signatures again."""
    latest = _locked(fixture, based_on)
    assert latest is not None  # _locked refuses a based_on when there is no plan
    rows = [dict(row) for row in latest.stewards]
    by_zone = {row["zone"]: row for row in rows}
    for zone, count in (stewards or {}).items():
        if zone not in by_zone:
            raise PlanError(
                "stewards", _("no zone '%(zone)s' in this fixture's layout") % {"zone": zone}
            )
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise PlanError(
                "stewards", _("%(zone)s: a whole number of stewards, 0 or more") % {"zone": zone}
            )
        by_zone[zone]["stewards"] = count
    new_measures = dict(latest.measures)
    for key, text in (measures or {}).items():
        if key not in new_measures:
            raise PlanError("measures", _("no measure '%(key)s'") % {"key": key})
        if not str(text).strip():
            raise PlanError(f"measures.{key}", _("must not be empty"))
        new_measures[key] = str(text).strip()
    new_communications = dict(latest.communications)
    for key, text in (communications or {}).items():
        if key not in new_communications:
            raise PlanError("communications", _("no '%(key)s': primary or fallback") % {"key": key})
        if not str(text).strip():
            raise PlanError(f"communications.{key}", _("must not be empty"))
        new_communications[key] = str(text).strip()
    first_aid = dict(latest.first_aid)
    if first_aiders is not None:
        if isinstance(first_aiders, bool) or first_aiders < 0:
            raise PlanError("first_aiders", _("a whole number, 0 or more"))
        first_aid["first_aiders"] = first_aiders
    if (rows, new_measures, new_communications, first_aid) == (
        latest.stewards,
        latest.measures,
        latest.communications,
        latest.first_aid,
    ):
        raise PlanError("plan", _("nothing changed"))
    return PlanVersion.objects.create(
        fixture=fixture,
        number=latest.number + 1,
        assessment=latest.assessment,
        category=latest.category,
        measures=new_measures,
        stewards=rows,
        first_aid=first_aid,
        communications=new_communications,
        note=note.strip(),
        created_by=by,
        created_at=timezone.now(),
    )


@transaction.atomic
def plan_sign(*, fixture: Fixture, by: User, version: int) -> PlanSignOff:
    """Sign the current version off in the signer's role (safety officer or police commander)."""
    latest = _locked(fixture, version)
    assert latest is not None
    roles = sorted(plan_sign_roles(by, fixture))
    if not roles:
        raise Forbidden("role", _("only the safety officer and the police commander sign the plan"))
    signed = set(latest.sign_offs.values_list("role", flat=True))
    role = next((r for r in roles if r not in signed), None)
    if role is None:
        raise PlanError(
            "version",
            _("version %(number)s is already signed in your role") % {"number": latest.number},
        )
    return PlanSignOff.objects.create(version=latest, role=role, user=by, signed_at=timezone.now())
