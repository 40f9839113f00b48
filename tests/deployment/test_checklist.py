"""A ground's checklist: the default is valid; a bad file is refused whole, naming the line, the
item and the key, within the limits every YAML file is held to; a ground's own file wins over the
default."""

import pytest
import yaml

from safeground import yaml_file
from safeground.deployment.checklist import (
    DEFAULT,
    ChecklistRefused,
    checklist_for,
    checklist_read,
)
from tests import factories
from tests.venues.test_venue_limits import alias_bomb

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
        ({**GOOD_ITEM, "critical": "yes"}, "items[1].critical"),
        ({**GOOD_ITEM, "at": "car-park"}, "items[1].at"),
        ({**GOOD_ITEM, "area": "catering"}, "items[1].area"),
        ({**GOOD_ITEM, "code": "Has Spaces"}, "items[1].code"),
        ({**GOOD_ITEM, "colour": "red"}, "items[1].colour"),
        ({k: v for k, v in GOOD_ITEM.items() if k != "name"}, "items[1].name"),
    ],
)
def test_a_bad_item_is_refused_naming_the_item_and_key(item, named) -> None:
    text = yaml.safe_dump({"items": [{**GOOD_ITEM, "code": "first"}, item]})
    with pytest.raises(ChecklistRefused) as refused:
        checklist_read(text, source="riverside-park.yaml")
    assert refused.value.code == "checklist_refused"
    assert any(
        problem.startswith("riverside-park.yaml:") and f": {named}: " in problem
        for problem in refused.value.errors
    ), refused.value.errors


def test_an_error_names_the_line_and_the_key_of_every_mistake() -> None:
    text = (
        "items:\n"
        "  - code: pa\n"
        "    name: PA heard\n"
        "    area: pa\n"
        "    at: zone\n"
        "    critical: false\n"
        "  - code: gates\n"
        "    name: Gates open\n"
        "    area: catering\n"
        "    at: car-park\n"
        "    critical: yes please\n"
    )
    with pytest.raises(ChecklistRefused) as refused:
        checklist_read(text, source="riverside-park.yaml")
    assert refused.value.errors == [
        "riverside-park.yaml:9: items[1].area: must be one of gates, exits, barriers, fire, pa, "
        "cctv, first_aid, other, got 'catering'",
        "riverside-park.yaml:10: items[1].at: must be one of zone, gate, concourse, got 'car-park'",
        "riverside-park.yaml:11: items[1].critical: must be true or false, got 'yes please'",
    ]


def test_a_code_used_twice_and_a_file_that_is_not_yaml_are_refused() -> None:
    with pytest.raises(
        ChecklistRefused, match=r":7: items\[1\]\.code: duplicate item 'pa' \(first on line 2\)"
    ):
        checklist_read(yaml.safe_dump({"items": [GOOD_ITEM, dict(GOOD_ITEM)]}, sort_keys=False))
    with pytest.raises(ChecklistRefused, match="checklist:1: not valid YAML"):
        checklist_read("items: [unclosed")
    with pytest.raises(ChecklistRefused, match="items: a checklist needs at least one item"):
        checklist_read(yaml.safe_dump({"items": []}))


def test_a_checklist_over_the_size_limit_is_refused_unread(db, settings, tmp_path) -> None:
    ground = factories.ground()
    path = tmp_path / f"{ground.code}.yaml"
    path.write_text("# padding\n" * (yaml_file.MAX_FILE_BYTES // 10 + 1))
    settings.SAFEGROUND_CHECKLIST_DIR = str(tmp_path)
    with pytest.raises(ChecklistRefused) as refused:
        checklist_for(ground)
    assert refused.value.errors == [f"{path}: the file is over 500,000 bytes, a checklist's limit"]


def test_an_alias_bomb_is_refused_as_it_is_read() -> None:
    with pytest.raises(ChecklistRefused) as refused:
        checklist_read(alias_bomb(), source="riverside-park.yaml")
    [error] = refused.value.errors
    assert error.startswith("riverside-park.yaml:")
    assert "more than 200,000 values (aliases expanded), the limit" in error


def test_a_ground_with_its_own_file_uses_it(db, settings, tmp_path) -> None:
    ground = factories.ground()
    assert checklist_for(ground).items[0].code == checklist_read(DEFAULT.read_text()).items[0].code
    (tmp_path / f"{ground.code}.yaml").write_text(yaml.safe_dump({"items": [GOOD_ITEM]}))
    (tmp_path / "another-ground.yaml").write_text("not: [a checklist")
    settings.SAFEGROUND_CHECKLIST_DIR = str(tmp_path)
    assert [item.code for item in checklist_for(ground).items] == ["pa"]
