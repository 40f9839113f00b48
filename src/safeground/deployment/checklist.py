"""A ground's checklist of pre-match checks: a YAML file, read and validated before any use.

A bad file is refused whole, every problem named as `FILE:LINE: KEY: message` (read and checked
by safeground/yaml_file.py, within its size and alias limits, as venue files and the risk policy
are), so the person editing it can put it right in one pass; nothing is made from half a list.
"""

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

from safeground.errors import FileRefused
from safeground.venues.models import Ground
from safeground.yaml_file import Check, yaml_load, yaml_text

from .models import MatchCheck

DEFAULT = Path(__file__).parent / "checklists" / "default.yaml"

AREAS = tuple(MatchCheck.Area.values)
PLACES = ("zone", "gate", "concourse")  # where an item is done, once per place of the match
_CODE = re.compile(r"[a-z0-9][a-z0-9-]{0,39}")
_NAME_LENGTH = MatchCheck._meta.get_field("name").max_length


class ChecklistRefused(FileRefused):
    code = "checklist_refused"


@dataclass(frozen=True)
class Item:
    code: str
    name: str
    area: str
    at: str
    critical: bool


@dataclass(frozen=True)
class Checklist:
    items: tuple[Item, ...]


def checklist_path(ground: Ground) -> Path:
    """The ground's own file in SAFEGROUND_CHECKLIST_DIR, when there is one; else the default."""
    folder = settings.SAFEGROUND_CHECKLIST_DIR
    if folder:
        own = Path(folder) / f"{ground.code}.yaml"
        if own.is_file():
            return own
    return DEFAULT


def checklist_read(text: str, *, source: str = "checklist") -> Checklist:
    document = yaml_load(text=text, filename=source, refused=ChecklistRefused, what="a checklist")
    check = Check(source)
    items: list[Item] = []
    top = check.mapping(document, 1, "", ("items",))
    if top is not None:
        listed = check.items(top, "items", "items", required=True)
        if "items" in top and not listed:
            check.error(top.key_lines["items"], "items", "a checklist needs at least one item")
        seen: dict[str, int] = {}
        for key, value, line in listed:
            item = _item(check, value, line, key, seen)
            if item is not None:
                items.append(item)
    if check.errors:
        raise ChecklistRefused(check.errors)
    return Checklist(items=tuple(items))


def _item(check: Check, value: Any, line: int, key: str, seen: dict[str, int]) -> Item | None:
    m = check.mapping(value, line, key, ("code", "name", "area", "at", "critical"))
    if m is None:
        return None
    code = check.text(m, "code", f"{key}.code", max_length=40)
    if code is not None and not _CODE.fullmatch(code):
        check.error(
            m.key_lines["code"],
            f"{key}.code",
            f"must be lower-case letters, digits and dashes, got {code!r}",
        )
        code = None
    if code is not None:
        check.unique(seen, code, m.key_lines["code"], f"{key}.code", "item")
    name = check.text(m, "name", f"{key}.name", max_length=int(_NAME_LENGTH or 200))
    area = check.text(m, "area", f"{key}.area", max_length=20)
    area = check.choice(area, m.key_lines.get("area", m.line), f"{key}.area", AREAS)
    at = check.text(m, "at", f"{key}.at", max_length=20)
    at = check.choice(at, m.key_lines.get("at", m.line), f"{key}.at", PLACES)
    critical = check.boolean(m, "critical", f"{key}.critical", default=None)
    if code is None or name is None or area is None or at is None or critical is None:
        return None
    return Item(code=code, name=name, area=area, at=at, critical=critical)


def checklist_for(ground: Ground) -> Checklist:
    path = checklist_path(ground)
    text = yaml_text(path=path, refused=ChecklistRefused, what="a checklist")
    return checklist_read(text, source=path.name)
