import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from safeground.accounts.models import Organisation
from tests import factories


@pytest.fixture
def club(db: None) -> Organisation:
    return factories.organisation(name="Riverside Athletic")


@pytest.fixture
def venue_file(tmp_path: Path) -> Callable[[str], Path]:
    """Write a venue file; the text's first line is line 1, so tests can name lines plainly."""

    def write(text: str) -> Path:
        path = tmp_path / "venue.yaml"
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return write
