"""At full time the control room signs the log; a police commander keeps their force's copy of
the match's signed checkpoints: from the fixture page to the checkpoints, a download, and the
copy checks against the club's log."""

import pytest
from playwright.sync_api import expect

from safeground.accounts.models import User
from safeground.incidents.checkpoints import checkpoints_from_path
from safeground.incidents.models import LogCheckpoint
from safeground.incidents.services import Place, log_entry_append
from safeground.incidents.verify import log_verify
from safeground.matches.models import Fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_police_download_the_full_time_checkpoint_and_it_verifies(
    site, new_page, log_in, tmp_path
):
    cup_tie = Fixture.objects.get(away_club__name="Chelsea")
    loggist = User.objects.get(username="loggist")
    for wave in range(1, 4):
        log_entry_append(
            fixture=cup_tie,
            author=loggist,
            category="missile",
            text=f"Coins thrown, wave {wave}",
            place=Place(block="S-L2"),
        )
    # At full time the loggist signs the log from the control room.
    room = log_in(new_page(), "loggist")
    room.goto(f"{site}/fixtures/{cup_tie.pk}/control/")
    room.get_by_role("button", name="Full time: sign the log").click()
    expect(room.locator("[data-signed]")).to_contain_text("Signed at entry #3")
    signed = LogCheckpoint.objects.get(fixture=cup_tie, reason=LogCheckpoint.Reason.FULL_TIME)
    assert signed.entries == 3

    police = log_in(new_page(), "police")
    police.goto(f"{site}/fixtures/{cup_tie.pk}/control/")
    expect(police.get_by_role("button", name="Full time: sign the log")).to_have_count(0)
    police.goto(f"{site}/")
    police.get_by_role("link", name="West Ham United v Chelsea").click()
    police.get_by_role("link", name="Signed checkpoints of the log").click()
    row = police.locator(f'[data-checkpoint="{signed.entries}"]')
    expect(row).to_contain_text("Full time")
    expect(row).to_contain_text(signed.head)
    with police.expect_download() as download:
        police.locator("[data-download-all]").click()
    copy = tmp_path / download.value.suggested_filename
    download.value.save_as(copy)

    held = checkpoints_from_path(copy)
    assert [c.head for c in held] == [signed.head]
    assert log_verify(cup_tie.pk, held).ok
