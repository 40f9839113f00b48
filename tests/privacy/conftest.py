"""The home club of the factories' cast, as tests/bans has it."""

import pytest

from safeground.accounts.models import Organisation


@pytest.fixture
def home(cast) -> Organisation:
    return cast.home
