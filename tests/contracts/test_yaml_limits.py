"""Every YAML file people bring (a venue file, the risk policy, a ground's checklist) is read by
the one reader (safeground/yaml_file.py): each refuses, with its own error and the line, a file
over the size limit, an alias bomb, lists nested past the depth limit and a key given twice."""

from collections.abc import Callable

import pytest

from safeground import yaml_file
from safeground.deployment.checklist import ChecklistRefused, checklist_read
from safeground.errors import FileRefused
from safeground.matches.policy import PolicyFileError, policy_parse
from safeground.venues.venue_file import VenueFileError, venue_file_parse
from tests.venues.test_venue_limits import alias_bomb

READERS: list[tuple[str, Callable[[str], object], type[FileRefused]]] = [
    ("a venue file", lambda text: venue_file_parse(text=text, filename="f.yaml"), VenueFileError),
    ("a risk policy", lambda text: policy_parse(text=text, filename="f.yaml"), PolicyFileError),
    ("a checklist", lambda text: checklist_read(text, source="f.yaml"), ChecklistRefused),
]


def refused(read: Callable[[str], object], error: type[FileRefused], text: str) -> list[str]:
    with pytest.raises(error) as raised:
        read(text)
    return raised.value.errors


@pytest.mark.parametrize(("what", "read", "error"), READERS)
def test_a_file_over_the_size_limit(what, read, error) -> None:
    text = "# padding\n" * (yaml_file.MAX_FILE_BYTES // 10 + 1)
    assert refused(read, error, text) == [f"f.yaml: the file is over 500,000 bytes, {what}'s limit"]


@pytest.mark.parametrize(("what", "read", "error"), READERS)
def test_an_alias_bomb(what, read, error) -> None:
    [message] = refused(read, error, alias_bomb())
    assert (
        message
        == "f.yaml:6: not valid YAML: more than 200,000 values (aliases expanded), the limit"
    )


@pytest.mark.parametrize(("what", "read", "error"), READERS)
def test_lists_nested_past_the_depth_limit(what, read, error) -> None:
    # Before the limit, PyYAML's recursion ran out of stack: a RecursionError, not a refusal.
    text = "items:\n" + "  " + "[" * 5_000 + "]" * 5_000 + "\n"
    [message] = refused(read, error, text)
    assert message == (
        f"f.yaml:2: not valid YAML: more than {yaml_file.MAX_DEPTH} lists or mappings inside "
        "one another"
    )


@pytest.mark.parametrize(("what", "read", "error"), READERS)
def test_a_key_given_twice(what, read, error) -> None:
    [message] = refused(read, error, "items: []\nitems: []\n")
    assert message == "f.yaml:2: not valid YAML: 'items' is given twice (first on line 1)"
