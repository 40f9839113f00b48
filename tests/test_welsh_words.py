"""Welsh where the README promises it (issue 38 row 10): the start page after login, the default
checklist's items and the roles read in Welsh."""

import pytest
from django.utils import translation

from safeground.accounts.permissions import role_label
from safeground.deployment.checklist import DEFAULT, checklist_read
from safeground.deployment.checklist_words import DEFAULT_ITEM_NAMES

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_second_factor")]


def test_the_default_checklists_items_are_all_in_the_catalogue_and_in_welsh() -> None:
    names = [item.name for item in checklist_read(DEFAULT.read_text(), source=DEFAULT.name).items]
    assert sorted(names) == sorted(DEFAULT_ITEM_NAMES)
    with translation.override("cy"):
        assert all(translation.gettext(name) != name for name in names)


def test_the_roles_read_in_welsh() -> None:
    with translation.override("cy"):
        assert role_label("police_commander") == "Comander yr heddlu"
        assert role_label("safety_officer") == "Swyddog diogelwch"


def test_the_start_page_after_login_is_in_welsh(client_for) -> None:
    page = client_for("safety").get("/", HTTP_ACCEPT_LANGUAGE="cy").content.decode()
    assert "Braf eich gweld" in page and "Gemau i ddod" in page and "Swyddog diogelwch" in page
    assert "Good to see you" not in page and "Coming matches" not in page
