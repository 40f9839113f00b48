"""The cup tie's decisions as the commanders made them that night (shared/domain/
london-derby-2016.md): the alcohol ban before the match, riot police into the concourse, holding
the away supporters after the whistle. Entered as the paper log would be, afterwards: each says
it is retrospective."""

from datetime import datetime, timedelta

from safeground.accounts.models import User
from safeground.decisions.services import DecisionParts, decision_record, decision_review
from safeground.incidents.models import LogEntry
from safeground.matches.models import Fixture

RETROSPECTIVE = "Entered from the night's written decision log when the demo was loaded"


def _at(cup_tie: Fixture, minutes: int) -> datetime:
    return cup_tie.kickoff + timedelta(minutes=minutes)


def _surge(cup_tie: Fixture) -> tuple[int, ...]:
    """The concourse surge the riot police were sent in for (history.cup_tie_night_load)."""
    found = LogEntry.objects.filter(
        fixture=cup_tie, kind=LogEntry.Kind.REPORT, category__code="crowd-surge"
    )
    return tuple(found.order_by("seq").values_list("seq", flat=True))


def cup_tie_decisions_load(cup_tie: Fixture) -> None:
    loggist = User.objects.get(username="loggist")
    safety = User.objects.get(username="safety")
    police = User.objects.get(username="police")
    decisions = [
        (
            safety,
            -585,
            DecisionParts(
                decision="No alcohol on sale anywhere in the ground for this match",
                rationale="A London derby in the cup, category C, after disorder at the "
                "Watford and Middlesbrough matches this season",
                information="The police's intelligence on both clubs' risk groups; "
                "this season's log",
                threat_assessment="High: risk groups of both clubs expected; drink raised "
                "the earlier disorder",
                powers_policy="Ground regulations; the safety certificate's conditions; "
                "the match plan",
                options_considered="Normal bar service; no alcohol in the away end only; "
                "no alcohol anywhere",
                options_rejected="Away end only: the home concourses meet the away end's "
                "at the top of the lower tier",
                review_at=_at(cup_tie, -60),
            ),
        ),
        (
            police,
            88,
            DecisionParts(
                decision="Riot police (public order unit) into the south lower concourse",
                rationale="Both sets of supporters surging at each other; stewards stretched",
                information="Supervisor's report of the surge on the lower-tier concourse; CCTV",
                threat_assessment="High: a stand-off face to face, missiles thrown earlier",
                powers_policy="Common-law power to prevent a breach of the peace; "
                "Public Order Act 1986",
                options_considered="Stewards alone; a police line across the concourse; the public "
                "order unit in",
                options_rejected="Stewards alone: outnumbered, and stewards had been moved between "
                "areas all night",
                links=_surge(cup_tie),
            ),
        ),
        (
            safety,
            89,
            DecisionParts(
                decision="Hold the away supporters in the stand after the final whistle",
                rationale="Stand-off on the concourse; the two groups' routes out meet there",
                threat_assessment="High until the concourse is clear",
                powers_policy="Match plan: segregation at egress",
                options_considered="Release together; hold the away end; hold the home lower tier",
                options_rejected="Release together: the routes cross at the top of the lower tier",
                review_at=_at(cup_tie, 110),
            ),
        ),
    ]
    made = []
    for maker, minutes, parts in decisions:
        made.append(
            decision_record(
                fixture=cup_tie,
                loggist=loggist,
                decision_maker=maker,
                parts=parts,
                decided_at=_at(cup_tie, minutes),
                retrospective_reason=RETROSPECTIVE,
            )
        )
    decision_review(decision=made[0], by=loggist, note="Stands: reviewed at the police briefing")
    decision_review(
        decision=made[2], by=loggist, note="Concourse clear: away supporters released in stages"
    )
