"""Reads for a steward's phone page: the places near their post, and the tasks given to them."""

from dataclasses import asdict, dataclass
from typing import Any

from django.db.models import Q

from safeground.live.viewers import viewer_for
from safeground.matches.models import Fixture
from safeground.venues.models import Block, BlockAdjacency, ZoneBlock, natural_key

from .catch_up import log_seen
from .models import Category, LogEntry
from .selectors import IncidentState, categories, post_label

# The categories a steward reports most, as big buttons; the rest stay one tap further away.
COMMON_CATEGORIES = [
    "missile",
    "disorder",
    "segregation-breach",
    "crowd-surge",
    "medical",
    "pyrotechnic",
    "chanting-other",
    "other",
]


def post_place(post: Any) -> dict[str, str] | None:
    """The post as a report's default place: the codes the log API takes, and a label."""
    if post is None:
        return None
    for field in ("zone", "gate", "concourse"):
        place = getattr(post, field)
        if place is not None:
            return {"field": field, "code": place.code, "label": post_label(post)}
    return None


def post_blocks(post: Any) -> list[Block]:
    """The blocks of the post, then the blocks touching them (where a steward can see)."""
    if post is None:
        return []
    if post.zone_id:
        members = ZoneBlock.objects.filter(zone_id=post.zone_id)
        own_ids = set(members.values_list("block_id", flat=True))
    else:
        place = post.gate or post.concourse
        own_ids = set(place.blocks.values_list("id", flat=True))
    near_ids: set[int] = set()
    pairs = BlockAdjacency.objects.filter(Q(block_id__in=own_ids) | Q(neighbour_id__in=own_ids))
    for a, b in pairs.values_list("block_id", "neighbour_id"):
        near_ids.update((a, b))
    near_ids -= own_ids
    found = {b.pk: b for b in Block.objects.filter(pk__in=own_ids | near_ids)}
    own = sorted((found[i] for i in own_ids if i in found), key=lambda b: natural_key(b.code))
    near = sorted((found[i] for i in near_ids if i in found), key=lambda b: natural_key(b.code))
    return own + near


def steward_categories() -> tuple[list[Category], list[Category]]:
    """(the common categories, in the order a steward meets them; every other active one)."""
    active = list(categories())
    by_code = {c.code: c for c in active}
    common = [by_code[code] for code in COMMON_CATEGORIES if code in by_code]
    return common, [c for c in active if c.code not in COMMON_CATEGORIES]


def task_json(state: IncidentState) -> dict[str, Any]:
    keep = (
        "id",
        "seq",
        "status",
        "category_name",
        "severity",
        "text",
        "place",
        "place_names",
        "task",
    )
    return {key: value for key, value in asdict(state).items() if key in keep}


@dataclass(frozen=True)
class StewardLog:
    """What a steward's page shows of the log: their tasks and their own reports."""

    tasks: list[dict[str, Any]]  # open incidents last assigned to them, oldest first
    reports: list[dict[str, Any]]  # the reports they wrote, as they stand now, newest first


def steward_log(fixture: Fixture, user: Any) -> StewardLog:
    """From the log as they may see it (one read), the same entries their socket brings: the
    incidents whose latest assignment is to them and that are not closed, and the reports they
    wrote, wherever they are (a person always sees what they reported and its state)."""
    latest: dict[int, IncidentState] = {}
    mine: set[int] = set()
    for entry, state in log_seen(fixture_id=fixture.pk, viewer=viewer_for(user, fixture)):
        latest[entry.concerns_id or entry.pk] = state
        if entry.kind == LogEntry.Kind.REPORT and entry.author_id == user.pk:
            mine.add(entry.pk)
    tasks = [
        state
        for state in latest.values()
        if state.assignee_username == user.username and state.status != LogEntry.Status.CLOSED
    ]
    return StewardLog(
        tasks=[task_json(state) for state in sorted(tasks, key=lambda s: s.seq)],
        reports=[report_json(latest[i]) for i in sorted(mine, key=lambda i: -latest[i].seq)],
    )


def report_json(state: IncidentState) -> dict[str, Any]:
    """One of the steward's own reports on their page: what it was, and its state now."""
    keep = ("id", "seq", "status", "category_name", "text", "place", "place_names", "updated_seq")
    return {key: value for key, value in asdict(state).items() if key in keep} | {
        "observed_at": state.observed_at
    }


def last_seq(fixture: Fixture) -> int:
    seq = LogEntry.objects.filter(fixture=fixture).order_by("-seq").values_list("seq", flat=True)
    return seq.first() or 0
