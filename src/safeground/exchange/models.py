"""The league's ban exchange, as the exchange installation holds it (docs/adr/0015): the clubs
enrolled with their signing keys, the bans each publishes (kind, end, and OPRF tokens, never a
name or a date of birth), and the record of every publication and query. A checking club's side
of a match is bans.LeagueBan and entry.TicketFlag, in that club's own database.
"""

from django.db import models
from django.utils.translation import gettext_lazy as _

from safeground.append_only import AppendOnlyModel


class Club(models.Model):
    """A club enrolled at the exchange: its name and contact (what a match shows other clubs)
    and the Ed25519 public key its requests are signed with (safeground.signing)."""

    name = models.CharField(max_length=200, unique=True)
    contact = models.CharField(max_length=300)
    public_key = models.CharField(max_length=64, help_text="base64url, 32 bytes raw")
    key_id = models.CharField(max_length=16, unique=True)
    enrolled_at = models.DateTimeField()

    def __str__(self) -> str:
        return self.name


class PublishedBan(models.Model):
    """A ban a club publishes: an opaque reference, its kind and end; withdrawn when the club
    no longer publishes it. Its tokens are PublishedToken rows."""

    club = models.ForeignKey(Club, on_delete=models.PROTECT, related_name="bans")
    reference = models.CharField(max_length=64)
    kind = models.CharField(max_length=20)
    is_life = models.BooleanField(default=False)
    ends_on = models.DateField(null=True, blank=True)
    published_at = models.DateTimeField()
    withdrawn_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["club", "reference"], name="publishedban_unique")
        ]

    def __str__(self) -> str:
        return f"{self.club}: {self.reference[:8]}"


class PublishedToken(models.Model):
    """One OPRF output of a banned person's identity (hex): comparable, not reversible without
    the exchange's key and a guess (docs/adr/0015)."""

    ban = models.ForeignKey(PublishedBan, on_delete=models.CASCADE, related_name="tokens")
    token = models.CharField(max_length=128, db_index=True)


class Unusual(models.TextChoices):
    """Why a use of the exchange is out of the ordinary (an ExchangeRecord's detail when its
    action is "unusual"): each shown to the clubs whose bans were published at the time."""

    MORE_HOLDERS_THAN_TICKETS = (
        "more_holders_than_tickets",
        _("Refused: a check of more holders than the fixture's tickets"),
    )
    HOLDERS_ABOVE_TICKETS = (
        "holders_above_tickets",
        _("More holders checked in a day than the tickets of its coming fixtures"),
    )
    HOLDERS_OVER_MARGIN = (
        "holders_over_margin",
        _("Refused: more holders in a day than its coming fixtures' tickets allow"),
    )
    SMALL_CHECKS = "small_checks", _("Many small checks in a day")
    BEYOND_PUBLICATION = "beyond_publication", _("More evaluated than the bans it then published")
    PUBLICATION_OVER_BOUND = (
        "publication_over_bound",
        _("Refused: more evaluated for its publication than the bans it publishes allow"),
    )


class ExchangeRecord(AppendOnlyModel):
    """Every publication and every query: who, when, how many, and (as the club reports it
    after comparing) how many matched. The exchange knows only counts of what it was asked.
    A use out of the ordinary (services.Unusual) is a record of its own, shown to every club
    whose bans were published then (selectors.checks_against)."""

    class Action(models.TextChoices):
        PUBLISH = "publish", _("Published its bans")
        CHECK = "check", _("Checked a fixture's ticket holders")
        EVALUATE = "evaluate", _("Had a batch evaluated")
        OUTCOME = "outcome", _("Reported how many matched")
        REFUSED = "refused", _("Was refused (over a bound)")
        UNUSUAL = "unusual", _("Used the exchange unusually")

    at = models.DateTimeField(db_index=True)
    club = models.ForeignKey(Club, on_delete=models.PROTECT, related_name="records")
    action = models.CharField(max_length=10, choices=Action.choices)
    fixture = models.CharField(max_length=100, blank=True, help_text="the club's own label")
    of_check = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="steps"
    )
    count = models.PositiveIntegerField(default=0, help_text="holders asked, or bans published")
    matched = models.PositiveIntegerField(null=True, blank=True)
    withdrawn = models.PositiveIntegerField(default=0)
    tickets = models.PositiveIntegerField(
        null=True, blank=True, help_text="a check: the fixture's tickets, as the club declares"
    )
    coming = models.PositiveIntegerField(
        null=True, blank=True, help_text="a check: the tickets of the club's coming fixtures"
    )
    detail = models.CharField(max_length=300, blank=True, help_text="unusual: its code")

    class Meta:
        ordering = ["-at", "-pk"]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.club} {self.action} {self.count}"


class HolderToken(models.Model):
    """A club's own cache (its database, not the exchange's): a ticket holder's OPRF output
    under one exchange key, so a holder checked before is not blinded and evaluated again until
    the key changes (docs/adr/0015, Update); and likewise each of its published bans' inputs,
    so a publication evaluates only its new bans (third Update). Personal data: the identity is
    an HMAC of the folded name and date of birth under this installation's secret, the token is
    what the exchange's key makes of them; unused for the ticket retention period, erased."""

    identity = models.CharField(max_length=64, help_text="HMAC-SHA256 of the holder's input")
    epoch = models.CharField(max_length=16, help_text="the exchange key's fingerprint")
    token = models.CharField(max_length=128)
    checked_at = models.DateTimeField(db_index=True, help_text="last used by a check")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["epoch", "identity"], name="holdertoken_unique")
        ]

    def __str__(self) -> str:
        return f"{self.epoch}:{self.identity[:8]}"


class SeenRequest(models.Model):
    """A signed request's nonce, kept while the request would still be valid (the signature's
    five minutes' skew either way): the same request sent again is refused (a replay)."""

    club = models.ForeignKey(Club, on_delete=models.CASCADE, related_name="+")
    nonce = models.CharField(max_length=32)
    at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["club", "nonce"], name="seenrequest_unique")]

    def __str__(self) -> str:
        return f"{self.club}: {self.nonce}"


class LeaguePublication(models.Model):
    """A club's publication to the exchange (one row, the club's side): pending from a change
    of the register until the worker's next publication succeeds, so no user's request waits
    for the exchange; the last attempt, and what went wrong with it while the exchange is down."""

    pending_since = models.DateTimeField(
        null=True, blank=True, help_text="the first change waiting"
    )
    changed_at = models.DateTimeField(null=True, blank=True, help_text="the last change")
    attempted_at = models.DateTimeField(null=True, blank=True)
    published_at = models.DateTimeField(null=True, blank=True)
    bans = models.PositiveIntegerField(default=0, help_text="bans in the last publication")
    failure = models.CharField(max_length=300, blank=True)

    def __str__(self) -> str:
        return f"pending since {self.pending_since}" if self.pending_since else "published"


class LeagueCheckRun(models.Model):
    """A fixture's check run in the background (the club's side: the first check of its
    60,000 holders takes its seconds; docs/adr/0015, fourth Update): who asked, when it started
    and finished, how many holders it has the tokens of out of how many, and the holders it
    could not check when it failed, with why. The fixture's page shows the last one."""

    fixture = models.ForeignKey(
        "matches.Fixture", on_delete=models.CASCADE, related_name="league_check_runs"
    )
    asked_by = models.CharField(max_length=150, help_text="a username, or the ticket import")
    started_at = models.DateTimeField()
    progressed_at = models.DateTimeField(help_text="the last progress seen")
    finished_at = models.DateTimeField(null=True, blank=True)
    total = models.PositiveIntegerField(default=0, help_text="holders to check")
    done = models.PositiveIntegerField(default=0, help_text="holders with their token")
    failures = models.PositiveIntegerField(default=0, help_text="holders not checked: it failed")
    failure = models.CharField(max_length=300, blank=True)
    matched = models.PositiveIntegerField(null=True, blank=True)
    flagged = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["fixture", "-started_at"], name="leaguecheckrun_last")]

    def __str__(self) -> str:
        return f"fixture {self.fixture_id}: {self.done}/{self.total}"
