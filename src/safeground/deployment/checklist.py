"""A ground's checklist of pre-match checks: a YAML file, read and validated before any use.

A bad file is refused whole, each problem naming the item and the key, so the person editing it
can put it right; nothing is made from half a list.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from django.conf import settings
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from safeground.errors import FileRefused
from safeground.venues.models import Ground

DEFAULT = Path(__file__).parent / "checklists" / "default.yaml"


class ChecklistRefused(FileRefused):
    code = "checklist_refused"


class Item(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    code: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,39}$")
    name: str = Field(min_length=1, max_length=200)
    area: Literal["gates", "exits", "barriers", "fire", "pa", "cctv", "first_aid", "other"]
    at: Literal["zone", "gate", "concourse"]
    critical: bool


class Checklist(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    items: list[Item] = Field(min_length=1)


def checklist_path(ground: Ground) -> Path:
    """The ground's own file in SAFEGROUND_CHECKLIST_DIR, when there is one; else the default."""
    folder = settings.SAFEGROUND_CHECKLIST_DIR
    if folder:
        own = Path(folder) / f"{ground.code}.yaml"
        if own.is_file():
            return own
    return DEFAULT


def checklist_read(text: str, *, source: str = "checklist") -> Checklist:
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ChecklistRefused([f"{source}: not YAML ({error})"]) from None
    try:
        checklist = Checklist.model_validate(raw)
    except ValidationError as error:
        problems = []
        for e in error.errors():
            where = ".".join(str(part) for part in e["loc"]) or "the file"
            problems.append(f"{source}: {where}: {e['msg']}")
        raise ChecklistRefused(problems) from None
    seen: set[str] = set()
    for n, item in enumerate(checklist.items):
        if item.code in seen:
            raise ChecklistRefused([f"{source}: items.{n}.code: '{item.code}' is used twice"])
        seen.add(item.code)
    return checklist


def checklist_for(ground: Ground) -> Checklist:
    path = checklist_path(ground)
    return checklist_read(path.read_text(encoding="utf-8"), source=path.name)
