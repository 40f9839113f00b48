"""A wrong or hostile venue file is refused at once, in bounded memory, with an error naming
the limit it broke: the file's size, YAML aliases and the values they expand to, the number of
items in a list, rows and seats."""

import copy
import time
import tracemalloc
from io import StringIO
from pathlib import Path

import pytest
import yaml
from django.core.management import CommandError, call_command

from safeground.venues import venue_file
from safeground.venues.models import Ground
from safeground.venues.venue_file import VenueFileError, venue_file_parse, venue_file_read
from tests import factories

DEMO_FILE = Path(__file__).resolve().parents[2] / "src/safeground/venues/demo/london-stadium.yaml"


def refused(text: str) -> tuple[list[str], float, int]:
    """The errors, the seconds and the peak bytes allocated while refusing `text`."""
    tracemalloc.start()
    began = time.monotonic()
    with pytest.raises(VenueFileError) as error:
        venue_file_parse(text=text, filename="venue.yaml")
    took = time.monotonic() - began
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return error.value.errors, took, peak


def alias_bomb(levels: int = 9) -> str:
    """A billion values (10**levels) from a dozen short lines."""
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for n in range(1, levels):
        lines.append(f"a{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_as_it_is_read() -> None:
    errors, took, peak = refused(alias_bomb())
    assert len(errors) == 1 and "more than 200,000 values (aliases expanded)" in errors[0]
    assert errors[0].startswith("venue.yaml:")
    assert took < 2 and peak < 64 * 2**20


def test_too_many_aliases_are_refused() -> None:
    text = "a: &a x\nb: [" + ", ".join(["*a"] * (venue_file.MAX_ALIASES + 1)) + "]\n"
    errors, _, _ = refused(text)
    assert f"more than {venue_file.MAX_ALIASES} aliases" in errors[0]


def test_a_file_over_the_size_limit_is_not_read_whole(tmp_path) -> None:
    path = tmp_path / "venue.yaml"
    path.write_text("# padding\n" * (venue_file.MAX_FILE_BYTES // 10 + 1))
    with pytest.raises(VenueFileError) as error:
        venue_file_read(path=path)
    assert error.value.errors == [f"{path}: the file is over 500,000 bytes, a venue file's limit"]


def test_a_list_over_the_limit_is_refused_with_its_count() -> None:
    document = yaml.safe_load(factories.venue_text())
    copies = venue_file.MAX_ITEMS // len(document["blocks"]) + 1
    document["blocks"] = [copy.deepcopy(b) for b in document["blocks"] for _ in range(copies)]
    errors, _, _ = refused(yaml.safe_dump(document))
    count = len(document["blocks"])
    assert any(f"blocks: {count:,} items; at most 1,000" in e for e in errors)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"rows": "1-99999999"}, "rows: more than 200 rows, the limit for a block"),
        ({"rows": [str(n) for n in range(201)]}, "rows: 201 rows; at most 200 in a block"),
        ({"seats_per_row": 100_000}, "seats_per_row: 100,000; at most 500"),
        ({"capacity": 300_000}, "a ground at most 250,000"),
    ],
)
def test_rows_and_seats_over_their_limits_are_refused(change, message) -> None:
    document = yaml.safe_load(factories.venue_text())
    document["blocks"][0].update(change)
    errors, took, _ = refused(yaml.safe_dump(document))
    assert any(message in error for error in errors), errors
    assert took < 2


def test_the_demo_ground_is_well_within_the_limits() -> None:
    venue = venue_file_read(path=DEMO_FILE)
    assert len(venue.blocks) <= venue_file.MAX_ITEMS
    assert sum(block.capacity for block in venue.blocks) <= venue_file.MAX_SEATS


@pytest.mark.django_db
def test_the_command_names_the_limit_and_imports_nothing(tmp_path) -> None:
    factories.organisation()
    path = tmp_path / "bomb.yaml"
    path.write_text(alias_bomb())
    stderr = StringIO()
    with pytest.raises(CommandError, match="1 error in"):
        call_command("import_venue", str(path), stderr=stderr)
    assert "more than 200,000 values (aliases expanded), the limit" in stderr.getvalue()
    assert not Ground.objects.exists()
