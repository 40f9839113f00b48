"""Risk assessment: a fixture's category from the policy and the ground's history, explained."""

import uuid
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import yaml
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import override

from safeground.demo.season import demo_load
from safeground.incidents.models import LogEntry
from safeground.matches.models import Fixture, FixtureShare, RiskAssessment
from safeground.matches.policy import PolicyFileError, policy_current, policy_read
from safeground.matches.services import risk_assessment_current
from tests import factories

pytestmark = pytest.mark.django_db

DEFAULT_POLICY = Path(__file__).resolve().parents[2] / "src/safeground/matches/policy/default.yaml"


def a_policy(tmp_path: Path, name: str = "policy.yaml", **changes: object) -> Path:
    """The shipped policy with some top-level sections replaced, written to a file."""
    policy = yaml.safe_load(DEFAULT_POLICY.read_text())
    policy.update(changes)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(policy, sort_keys=False))
    return path


def labels() -> list[str]:
    return [level.label for level in policy_current().categories]


def day(moment: datetime) -> str:
    """A match's day as the reasons write it: the one date formatter's 10/09/2016."""
    return f"{timezone.localtime(moment):%d/%m/%Y}"


@pytest.fixture
def seed_like(cast, tmp_path, settings):
    """A season at the home club's ground like the seed case's: clashes in the stands in
    September, disorder and arrests on 5 October; then a quiet league match and an evening cup
    tie against a rival with a big away end. The policy names the rivalry."""
    ground = factories.ground(cast.home)
    london = factories.LONDON
    clashes_club = factories.club("Northgate United", short_name="Northgate")
    disorder_club = factories.club("Southmere", short_name="Southmere")
    clashes = factories.fixture(
        ground, away_club=clashes_club, kickoff=datetime(2024, 9, 14, 15, tzinfo=london)
    )
    disorder = factories.fixture(
        ground, away_club=disorder_club, kickoff=datetime(2024, 10, 5, 15, tzinfo=london)
    )
    clash_severities = [3, 4, 4]
    for severity in clash_severities:
        factories.report(
            clashes,
            category="disorder",
            severity=severity,
            text="Clashes in the stands",
            observed_at=clashes.kickoff + timedelta(minutes=30),
        )
    factories.report(
        disorder, category="disorder", severity=4, observed_at=disorder.kickoff + timedelta(hours=2)
    )
    arrests = 4
    for n in range(arrests):
        factories.report(
            disorder,
            category="arrest",
            text=f"Arrest {n + 1}",
            observed_at=disorder.kickoff + timedelta(hours=2, minutes=n),
        )
    quiet = factories.fixture(
        ground, away_allocation=1500, kickoff=datetime(2024, 10, 19, 15, tzinfo=london)
    )
    cup_tie = factories.fixture(
        ground,
        away_club=factories.club(factories.AWAY_CLUB, short_name="Eastport"),
        competition=factories.competition(factories.CUP),
        stage="Fourth round",
        away_allocation=5000,
        kickoff=datetime(2024, 10, 30, 19, 45, tzinfo=london),  # a Wednesday evening
        zones=factories.CUP_LAYOUT,
        shares={cast.police: FixtureShare.Purpose.POLICE},
    )
    rivalry = {"clubs": [factories.HOME_CLUB, factories.AWAY_CLUB], "name": "River derby"}
    settings.SAFEGROUND_RISK_POLICY = str(a_policy(tmp_path, rivalries=[rivalry | {"level": 2}]))
    return {
        "clashes": clashes,
        "disorder": disorder,
        "quiet": quiet,
        "cup_tie": cup_tie,
        "clash_severities": clash_severities,
        "arrests": arrests,
        "rivalry": rivalry["name"],
    }


def reasons(assessment: RiskAssessment) -> list[str]:
    return [reason for factor in assessment.factors for reason in factor["reasons"]]


def test_the_cup_tie_after_a_troubled_season_is_higher_and_names_both_matches(seed_like):
    cup = risk_assessment_current(fixture=seed_like["cup_tie"])
    quiet = risk_assessment_current(fixture=seed_like["quiet"])

    assert labels().index(cup.category) > labels().index(quiet.category)
    clashes, disorder = seed_like["clashes"], seed_like["disorder"]
    stored = LogEntry.objects.filter(fixture=clashes, kind="report", category__code="disorder")
    severities = [entry.severity for entry in stored]
    assert severities == seed_like["clash_severities"]
    assert (
        f"Fighting / disorder v Northgate on {day(clashes.kickoff)}: {len(severities)} entries, "
        f"severity up to {max(severities)}"
    ) in reasons(cup)
    arrests = LogEntry.objects.filter(fixture=disorder, category__code="arrest").count()
    assert f"Arrest v Southmere on {day(disorder.kickoff)}: {arrests} logged" in reasons(cup)
    assert any(seed_like["rivalry"] in reason for reason in reasons(cup))
    # Each factor's contribution is its value times its weight; together, the score.
    for factor in cup.factors:
        assert factor["contribution"] == pytest.approx(factor["value"] * factor["weight"], abs=0.01)
    assert cup.score == pytest.approx(sum(f["contribution"] for f in cup.factors), abs=0.01)


def test_recent_trouble_weighs_more_than_older_trouble(seed_like):
    cup = risk_assessment_current(fixture=seed_like["cup_tie"])
    ground = next(f for f in cup.factors if f["key"] == "ground_incidents")
    # Both matches' disorder had the same highest severity; the later one counts more per entry.
    older, later = ground["working"].split(" + ")[:2]
    recency = [float(part.split(" × ")[3].split(" ")[0]) for part in (older, later)]
    assert recency[0] < recency[1]


def test_a_fixture_with_no_history_gets_the_lowest_category_and_says_why(cast):
    fixture = factories.fixture(factories.ground(cast.home))

    assessment = risk_assessment_current(fixture=fixture)

    assert assessment.category == labels()[0]
    assert "No history" in assessment.summary
    history = [f for f in assessment.factors if f["key"] != "rivalry"][:4]
    assert all(f["value"] == 0 and f["reasons"] == [] for f in history)
    assert all(f["working"].startswith(("None", "No ")) for f in history)


def test_an_assessment_is_kept_and_stays_until_the_policy_changes(seed_like):
    cup = seed_like["cup_tie"]
    first = risk_assessment_current(fixture=cup)
    assert risk_assessment_current(fixture=cup) == first
    assert RiskAssessment.objects.filter(fixture=cup).count() == 1
    assert first.policy_sha256 == policy_current().sha256


def line_of(text: str, fragment: str, after: str = "") -> int:
    """1-based number of the first line containing `fragment` (after the line with `after`)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if after in line) if after else 0
    return next(i for i in range(start, len(lines)) if fragment in lines[i]) + 1


def test_a_bad_policy_file_is_refused_with_its_line_and_key(tmp_path):
    text = DEFAULT_POLICY.read_text()
    text = text.replace("  rivalry:\n    weight: 5.0", "  rivalry:\n    weight: lots")
    text = text.replace("  - {label: B, from: 10,", "  - {label: B, from: -3,")
    text = text.replace("season_starts:", "season_start:")
    path = tmp_path / "bad.yaml"
    path.write_text(text)

    with pytest.raises(PolicyFileError) as refused:
        policy_read(path=path)

    errors = refused.value.errors
    weight = line_of(text, "weight: lots")
    assert f"{path}:{weight}: factors.rivalry.weight: must be a number, got 'lots'" in errors
    b = line_of(text, "label: B")
    assert f"{path}:{b}: categories[1].from: must not be negative, got -3" in errors
    assert any(
        e.startswith(f"{path}:{line_of(text, 'season_start:')}: season_start: unknown key")
        for e in errors
    )
    # A missing key is named at the start of the mapping that should hold it (the first key).
    assert f"{path}:{line_of(text, 'categories:')}: season_starts: missing" in errors


def test_a_categorys_meaning_in_welsh_is_kept_with_the_assessment_and_shown_in_welsh(cast):
    fixture = factories.fixture(factories.ground(cast.home))

    assessment = risk_assessment_current(fixture=fixture)

    assert (assessment.meaning, assessment.meanings) == ("Low risk", {"cy": "Risg isel"})
    with override("cy"):
        assert assessment.local_meaning == "Risg isel"
    with override("en-gb"):
        assert assessment.local_meaning == "Low risk"


def test_a_meaning_in_an_unknown_language_is_refused_naming_the_language(tmp_path):
    text = DEFAULT_POLICY.read_text()
    text = text.replace('meanings: {cy: "Risg isel"}', 'meanings: {cy: "Risg isel", xx: "?"}')
    text = text.replace('meanings: {cy: "Risg uchel"}', 'meanings: "Risg uchel"')
    path = tmp_path / "bad.yaml"
    path.write_text(text)

    with pytest.raises(PolicyFileError) as refused:
        policy_read(path=path)

    errors = refused.value.errors
    assert (
        f"{path}:{line_of(text, 'label: A')}: categories[0].meanings.xx: "
        "unknown language 'xx'; expected one of cy"
    ) in errors
    assert (
        f"{path}:{line_of(text, 'label: C,')}: categories[2].meanings: "
        'must be a mapping of language to text, like {cy: "..."}'
    ) in errors
    assert not any("categories[1]" in error for error in errors)  # one mistake, one error


def test_the_command_refuses_a_bad_policy_naming_line_and_key(tmp_path):
    path = tmp_path / "bad.yaml"
    text = DEFAULT_POLICY.read_text().replace("  per: 1000", "  per: 0")
    path.write_text(text)
    with pytest.raises(
        CommandError, match=rf"{path}:{line_of(text, 'per: 0')}: away_allocation.per"
    ):
        call_command("assess", "--policy", str(path))


def test_the_page_says_the_policy_is_refused_rather_than_failing(
    cast, settings, tmp_path, no_second_factor
):
    fixture = factories.fixture(
        factories.ground(cast.home), shares={cast.police: FixtureShare.Purpose.POLICE}
    )
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        DEFAULT_POLICY.read_text().replace(
            "recency_half_life_days: 60", "recency_half_life_days: 0"
        )
    )
    settings.SAFEGROUND_RISK_POLICY = str(bad)

    response = factories.logged_in(cast["safety"]).get(reverse("fixture_risk", args=[fixture.pk]))

    assert response.status_code == 200
    assert "recency_half_life_days: must be more than 0" in response.content.decode()
    api = factories.logged_in(cast["safety"]).get(reverse("api:fixture_risk", args=[fixture.pk]))
    assert api.status_code == 400 and api.json()["code"] == "risk_policy_refused"


def test_a_changed_policy_reassesses_open_fixtures_only(seed_like, settings, tmp_path):
    played = seed_like["quiet"]
    coming = factories.fixture(
        played.ground, away_allocation=6000, kickoff=timezone.now() + timedelta(days=7)
    )
    before_played = risk_assessment_current(fixture=played)
    before = risk_assessment_current(fixture=coming)

    # The new policy weighs a big away end far more.
    policy = yaml.safe_load(Path(settings.SAFEGROUND_RISK_POLICY).read_text())
    policy["factors"]["away_allocation"]["weight"] = 30.0
    changed = tmp_path / "changed.yaml"
    changed.write_text(yaml.safe_dump(policy, sort_keys=False))
    settings.SAFEGROUND_RISK_POLICY = str(changed)
    call_command("assess")

    after = RiskAssessment.objects.filter(fixture=coming).latest()
    assert after.pk != before.pk and after.policy_sha256 == policy_current().sha256
    assert labels().index(after.category) > labels().index(before.category)
    # A played match keeps the category it was worked under.
    assert RiskAssessment.objects.filter(fixture=played).latest().pk == before_played.pk
    assert risk_assessment_current(fixture=played).pk == before_played.pk


def test_an_open_fixture_is_reassessed_on_load_after_a_policy_change(cast, settings, tmp_path):
    coming = factories.fixture(
        factories.ground(cast.home), kickoff=timezone.now() + timedelta(days=3)
    )
    before = risk_assessment_current(fixture=coming)
    settings.SAFEGROUND_RISK_POLICY = str(a_policy(tmp_path, recency_half_life_days=30))

    after = risk_assessment_current(fixture=coming)

    assert after.pk != before.pk and after.policy_sha256 != before.policy_sha256


def test_the_command_with_a_draft_policy_keeps_nothing(cast, tmp_path, capsys):
    coming = factories.fixture(
        factories.ground(cast.home), kickoff=timezone.now() + timedelta(days=3)
    )
    call_command("assess", "--policy", str(a_policy(tmp_path)))
    assert RiskAssessment.objects.filter(fixture=coming).count() == 0
    assert f"would be {labels()[0]}" in capsys.readouterr().out


def test_the_api_gives_every_factor_and_the_police_may_assess_again(
    seed_like, cast, no_second_factor
):
    cup = seed_like["cup_tie"]
    police = factories.logged_in(cast["police"])
    answer = police.get(reverse("api:fixture_risk", args=[cup.pk])).json()
    assert [f["key"] for f in answer["factors"]] == [
        "ground_incidents", "club_history", "arrests_ejections", "banned_denials",
        "rivalry", "competition", "kickoff", "away_allocation",
    ]  # fmt: skip
    again = police.post(reverse("api:fixture_risk_assess", args=[cup.pk]))
    assert again.status_code == 201
    assert RiskAssessment.objects.filter(fixture=cup).latest().assessed_by == cast["police"]
    steward = factories.logged_in(cast["steward"])
    assert steward.get(reverse("api:fixture_risk", args=[cup.pk])).status_code == 403


# The demo's own story: its season's log raises the cup tie, with the seed case's reasons.
@pytest.fixture
def demo_with_history(settings, db):
    settings.SAFEGROUND_DEMO_HISTORY = True
    return demo_load()


def test_the_demo_cup_tie_is_raised_by_watford_and_middlesbrough(demo_with_history):
    cup_tie = Fixture.objects.get(away_club__name="Chelsea")
    assessment = risk_assessment_current(fixture=cup_tie)
    said = reasons(assessment)
    for opponent in ("Watford", "Middlesbrough"):
        match = Fixture.objects.get(away_club__name=opponent)
        entries = LogEntry.objects.filter(fixture=match, kind="report", category__code="disorder")
        worst = max(entry.severity for entry in entries)
        assert (
            f"Fighting / disorder v {opponent} on {day(match.kickoff)}: {entries.count()} "
            f"entr{'y' if entries.count() == 1 else 'ies'}, severity up to {worst}"
        ) in said
    boro = Fixture.objects.get(away_club__name="Middlesbrough")
    arrests = LogEntry.objects.filter(fixture=boro, category__code="arrest").count()
    assert f"Arrest v Middlesbrough on {day(boro.kickoff)}: {arrests} logged" in said
    assert assessment.category not in {labels()[0]}


def test_banned_supporters_turned_away_at_the_gates_count_for_the_next_match(match_day):
    """The turnstiles' history (entry registers it): each banned ticket denied counts once."""
    earlier, later = match_day.league_match, match_day.cup_tie
    _, key = factories.device(match_day.cast.home)
    banned = []
    for n in range(3):
        ticket = factories.ticket(earlier, barcode=f"BANNED-{n}", block="S-L2")
        factories.flag(ticket, status="confirmed")
        banned.append(ticket)

    def scan(barcode: str) -> str:
        return (
            Client()
            .post(
                "/api/entry/scan",
                {
                    "barcode": barcode,
                    "turnstile": "F03",
                    "scanned_at": (earlier.kickoff - timedelta(hours=1)).isoformat(),
                    "nonce": str(uuid.uuid4()),
                },
                content_type="application/json",
                headers={"X-Device-Key": key},
            )
            .json()["reason"]
        )

    reasons_given = [scan(ticket.barcode) for ticket in [*banned, banned[0]]]  # one tries twice
    assert reasons_given == ["banned"] * 4

    assessment = risk_assessment_current(fixture=later)

    denials = next(f for f in assessment.factors if f["key"] == "banned_denials")
    opponent = earlier.away_club.short_name
    assert denials["reasons"] == [
        f"Banned supporters denied at the turnstiles v {opponent} on {day(earlier.kickoff)}:"
        f" {len(banned)}"
    ]
    assert denials["value"] > 0
