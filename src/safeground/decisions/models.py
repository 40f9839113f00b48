"""The decision log: commanders' decisions, their amendments and reviews, and the radio's state.

Each decision and each review is a chained record in the match's one log
(`incidents.models.LogEntry`, kind `decision` / `decision_review`): the row here holds the
decision's parts for reading and printing, and its entry carries their SHA-256, so the log's
chain and signed checkpoints anchor every word (docs/adr/0014-decision-log.md). Nothing here is
edited: an amendment is a new decision that strikes the old one through. A major incident's
M/ETHANE report is chained the same way, and corrected the same way.
"""

from django.conf import settings
from django.db import models

from safeground.append_only import AppendOnlyModel
from safeground.incidents.models import Broadcast, LogEntry
from safeground.matches.models import Fixture
from safeground.venues.models import Stand

from .parts import METHANE_MAX, METHANE_PARTS, part


class Decision(AppendOnlyModel):
    """One commander's decision as the loggist recorded it (JESIP joint decision log, National
    Decision Model: information and threat, powers and policy, options, action, review)."""

    fixture = models.ForeignKey(Fixture, on_delete=models.PROTECT, related_name="decisions")
    entry = models.OneToOneField(LogEntry, on_delete=models.PROTECT, related_name="decision")
    # Its parts, in decisions.parts' order, named and labelled by it (one column each).
    decision = models.TextField(part("decision").label)
    rationale = models.TextField(part("rationale").label)
    information = models.TextField(part("information").label, blank=True)
    threat_assessment = models.TextField(part("threat_assessment").label, blank=True)
    powers_policy = models.TextField(part("powers_policy").label, blank=True)
    options_considered = models.TextField(part("options_considered").label, blank=True)
    options_rejected = models.TextField(part("options_rejected").label, blank=True)
    review_at = models.DateTimeField(null=True, blank=True)
    # A decision to put the kick-off back: by how many minutes (none: not about the kick-off).
    kickoff_delay = models.PositiveSmallIntegerField(null=True, blank=True)
    # The commander who made it, named as they were then; the loggist is the entry's author.
    decision_maker = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    decision_maker_name = models.CharField(max_length=150)
    decision_maker_role = models.CharField(max_length=30)
    decided_at = models.DateTimeField()  # the entry's observed_at; logged_at is the entry's too
    retrospective_reason = models.TextField(blank=True)  # logged more than 5 minutes after
    amends = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="amendments"
    )
    amendment_reason = models.TextField(blank=True)
    links = models.JSONField(default=list, blank=True)  # the log entries (seq) it concerns
    home_only = models.BooleanField(default=False)
    sha256 = models.CharField(max_length=64)  # of its canonical form (decisions.digest)

    class Meta:
        ordering = ["fixture", "decided_at", "pk"]

    def __str__(self) -> str:
        return f"Decision #{self.entry.seq}: {self.decision[:60]}"


class DecisionReview(AppendOnlyModel):
    """A decision reviewed when its review time came: it stands, or it is to be amended."""

    decision = models.ForeignKey(Decision, on_delete=models.PROTECT, related_name="reviews")
    entry = models.OneToOneField(LogEntry, on_delete=models.PROTECT, related_name="review")
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField()
    note = models.TextField()
    next_review_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["decision", "at", "pk"]


class RadioSwitch(AppendOnlyModel):
    """The control room's "radio down" switch, thrown or put back: each a logged decision; going
    down also sends the plan's fallback instructions as a broadcast."""

    fixture = models.ForeignKey(Fixture, on_delete=models.PROTECT, related_name="radio_switches")
    down = models.BooleanField()
    at = models.DateTimeField()
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    decision = models.OneToOneField(Decision, on_delete=models.PROTECT, related_name="+")
    broadcast = models.ForeignKey(
        Broadcast, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    instructions = models.TextField(blank=True)

    class Meta:
        ordering = ["fixture", "at", "pk"]


class StandClosure(AppendOnlyModel):
    """A stand closed and evacuated by a commander, or reopened once all clear: each a logged
    decision, with the broadcast that told the stewards posted at its blocks. A stand's latest
    closure row says whether it is closed now (decisions/closures.py)."""

    fixture = models.ForeignKey(Fixture, on_delete=models.PROTECT, related_name="stand_closures")
    stand = models.ForeignKey(Stand, on_delete=models.PROTECT, related_name="+")
    closed = models.BooleanField()  # False: reopened, all clear
    at = models.DateTimeField()
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    reason = models.TextField()
    decision = models.OneToOneField(Decision, on_delete=models.PROTECT, related_name="+")
    broadcast = models.ForeignKey(
        Broadcast, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        ordering = ["fixture", "at", "pk"]


def _methane(key: str) -> models.CharField[str, str]:
    (found,) = [p for p in METHANE_PARTS if p.key == key]
    return models.CharField(found.label, max_length=METHANE_MAX, blank=not found.required)


class MethaneReport(AppendOnlyModel):
    """A major incident declared by a commander, and its M/ETHANE report (JESIP: Major incident
    declared, Exact location, Type, Hazards, Access, Number of casualties, Emergency services).
    A correction is a new report, with every part, that strikes the earlier one through."""

    fixture = models.ForeignKey(Fixture, on_delete=models.PROTECT, related_name="methane_reports")
    entry = models.OneToOneField(LogEntry, on_delete=models.PROTECT, related_name="methane")
    major_incident = _methane("major_incident")
    exact_location = _methane("exact_location")
    incident_type = _methane("incident_type")
    hazards = _methane("hazards")
    access = _methane("access")
    casualties = _methane("casualties")
    emergency_services = _methane("emergency_services")
    made_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    made_by_name = models.CharField(max_length=150)  # as they were named then
    made_by_role = models.CharField(max_length=30)  # safety_officer | police_commander
    made_at = models.DateTimeField()
    corrects = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="corrected_by"
    )
    correction_reason = models.CharField(max_length=METHANE_MAX, blank=True)
    home_only = models.BooleanField(default=False)  # every partner working the match reads it
    sha256 = models.CharField(max_length=64)  # of its canonical form (decisions.services)

    class Meta:
        ordering = ["fixture", "made_at", "pk"]

    def __str__(self) -> str:
        return f"M/ETHANE #{self.entry.seq}: {self.exact_location[:60]}"

    def parts(self) -> list[tuple[str, str, str]]:
        """(key, label, text) of its seven parts, in M, E, T, H, A, N, E order; the label in the
        active language."""
        return [(p.key, str(p.label), getattr(self, p.key)) for p in METHANE_PARTS]
