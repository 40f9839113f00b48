"""A ground's checklist: the default is valid; a bad file is refused whole, naming item and key;
a ground's own file wins over the default."""

import pytest
import yaml

from safeground.deployment.checklist import (
    DEFAULT,
    ChecklistRefused,
    checklist_for,
    checklist_read,
)
from tests import factories

GOOD_ITEM = {"code": "pa", "name": "PA heard", "area": "pa", "at": "zone", "critical": False}


def test_the_default_checklist_is_valid_and_has_critical_items() -> None:
    checklist = checklist_read(DEFAULT.read_text())
    raw = yaml.safe_load(DEFAULT.read_text())["items"]
    assert [item.code for item in checklist.items] == [item["code"] for item in raw]
    assert any(item.critical for item in checklist.items)
    assert {item.at for item in checklist.items} == {"zone", "gate", "concourse"}


@pytest.mark.parametrize(
    ("item", "named"),
    [
        ({**GOOD_ITEM, "critical": "yes"}, "items.1.critical"),
        ({**GOOD_ITEM, "at": "car-park"}, "items.1.at"),
        ({**GOOD_ITEM, "area": "catering"}, "items.1.area"),
        ({**GOOD_ITEM, "code": "Has Spaces"}, "items.1.code"),
        ({**GOOD_ITEM, "colour": "red"}, "items.1.colour"),
        ({k: v for k, v in GOOD_ITEM.items() if k != "name"}, "items.1.name"),
    ],
)
def test_a_bad_item_is_refused_naming_the_item_and_key(item, named) -> None:
    text = yaml.safe_dump({"items": [{**GOOD_ITEM, "code": "first"}, item]})
    with pytest.raises(ChecklistRefused) as refused:
        checklist_read(text, source="riverside-park.yaml")
    assert refused.value.code == "checklist_refused"
    assert any(f"riverside-park.yaml: {named}" in problem for problem in refused.value.errors)


def test_a_code_used_twice_and_a_file_that_is_not_yaml_are_refused() -> None:
    with pytest.raises(ChecklistRefused, match=r"items\.1\.code: 'pa' is used twice"):
        checklist_read(yaml.safe_dump({"items": [GOOD_ITEM, GOOD_ITEM]}))
    with pytest.raises(ChecklistRefused, match="not YAML"):
        checklist_read("items: [unclosed")
    with pytest.raises(ChecklistRefused, match="items"):
        checklist_read(yaml.safe_dump({"items": []}))


def test_a_ground_with_its_own_file_uses_it(db, settings, tmp_path) -> None:
    ground = factories.ground()
    assert checklist_for(ground).items[0].code == checklist_read(DEFAULT.read_text()).items[0].code
    (tmp_path / f"{ground.code}.yaml").write_text(yaml.safe_dump({"items": [GOOD_ITEM]}))
    (tmp_path / "another-ground.yaml").write_text("not: [a checklist")
    settings.SAFEGROUND_CHECKLIST_DIR = str(tmp_path)
    assert [item.code for item in checklist_for(ground).items] == ["pa"]
