"""The issuing club sees what other clubs did against its bans (issue 37): on the safety
officer's page of the league's exchange, a brute-force check another club was refused, and the
many small checks it was flagged for, beside the ordinary checks."""

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from playwright.sync_api import expect

from safeground import signing
from safeground.exchange import services

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_issuing_club_sees_a_refused_brute_force_and_flagged_small_checks(
    site, settings, new_page, log_in
):
    # This test's server plays the league's exchange too, with this club enrolled and its ban
    # published, and another club (a key of its own) trying the exchange's bounds.
    settings.SAFEGROUND_ROLE = "exchange"
    settings.SAFEGROUND_EXCHANGE_URL = site
    issuing = services.club_enrol(
        name="Riverside Athletic", contact="security@riverside.example",
        public_key=signing.public_key_json()["public_key"],
    )  # fmt: skip
    services.publication_replace(club=issuing, bans=[services.PublishedBanIn(
        reference="ab" * 8, kind="club_ban", is_life=True, ends_on=None,
        tokens=["cd" * 64, "ef" * 64],
    )])  # fmt: skip
    raw = Ed25519PrivateKey.generate().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    abusing = services.club_enrol(name="Westbrook FC", contact="security@westbrook.example",
                                  public_key=signing.b64url(raw))  # fmt: skip
    with pytest.raises(services.MoreThanTickets):
        services.check_begin(club=abusing, fixture="fixture 12", holders=10_000, tickets=300,
                             coming=900)  # fmt: skip
    for n in range(6):
        services.check_begin(club=abusing, fixture=f"fixture {n}", holders=1, tickets=300,
                             coming=900)  # fmt: skip

    page = log_in(new_page(), "safety")
    page.goto(f"{site}/register/")
    page.get_by_role("link", name="League ban exchange").click()
    refused = page.locator("[data-unusual-use]", has_text="more holders than the fixture")
    expect(refused).to_contain_text("Westbrook FC")
    expect(refused).to_contain_text("Refused: a check of more holders than the fixture's tickets")
    expect(refused).to_contain_text("fixture 12")
    expect(refused.get_by_role("cell", name="10000", exact=True)).to_be_visible()
    small = page.locator("[data-unusual-use]", has_text="Many small checks in a day")
    expect(small).to_contain_text("fixture 5")
    checks = page.locator("[data-checks-against] tbody tr")
    expect(checks).to_have_count(6)
    expect(checks.first).to_contain_text("Many small checks in a day")
    expect(checks.last).not_to_contain_text("Many small checks")
