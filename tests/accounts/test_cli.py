import subprocess
import sys

import pytest
from django.core.management import CommandError, call_command

from safeground.accounts.models import Membership
from safeground.cli import COMMANDS
from tests import factories

pytestmark = pytest.mark.django_db


def test_help_lists_every_operator_command_with_one_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "safeground.cli", "--help"], capture_output=True, text=True
    )
    assert result.returncode == 0
    for name, text in COMMANDS.items():
        assert f"{name}" in result.stdout and text in result.stdout


def test_adduser_creates_a_user_with_a_role(db) -> None:
    factories.organisation(name="Riverside Athletic")
    call_command(
        "adduser",
        "newsteward",
        organisation="riverside-athletic",
        role="steward",
        password="long-enough-1",
    )
    membership = Membership.objects.get(user__username="newsteward")
    assert membership.role == "steward"
    assert membership.organisation.name == "Riverside Athletic"


def test_adduser_names_what_is_wrong(db) -> None:
    club = factories.organisation(name="Riverside Athletic")
    factories.member(club, "steward", username="steward")
    with pytest.raises(CommandError, match="unknown organisation 'nowhere'"):
        call_command(
            "adduser", "x", organisation="nowhere", role="steward", password="long-enough-1"
        )
    with pytest.raises(CommandError, match="already taken"):
        call_command(
            "adduser",
            "steward",
            organisation="riverside-athletic",
            role="steward",
            password="long-enough-1",
        )
    assert not Membership.objects.filter(user__username="x").exists()
