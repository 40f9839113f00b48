"""A club's publication over the exchange's real routes (this test's own server plays the
exchange, with this club enrolled): every ban has two tokens, a date that cannot be swapped
given a filler; and the bans' tokens are cached under the exchange's key, so publishing again
(every 15 minutes, or a retry) evaluates nothing and spends none of the publication's bound."""

from datetime import date

import pytest

from safeground import signing
from safeground.exchange import services
from safeground.exchange.models import ExchangeRecord, PublishedBan
from safeground.exchange.publishing import league_publish
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)


def test_each_ban_has_two_tokens_and_publishing_again_evaluates_nothing(settings, asgi_server):
    settings.SAFEGROUND_ROLE = "exchange"
    settings.SAFEGROUND_EXCHANGE_URL = f"http://{asgi_server}"
    club = services.club_enrol(
        name="Riverside Athletic", contact="security@riverside.example",
        public_key=signing.public_key_json()["public_key"],
    )  # fmt: skip
    people = factories.cast()
    for first, born in (("Jules", date(1988, 6, 30)), ("Avery", date(1991, 4, 7))):
        factories.ban(
            people.home, status="active", first_names=first, last_name="Darrowfen",
            date_of_birth=born, is_life=True, scope="register", starts_on=date(2024, 1, 1),
            proposed_by=people["banofficer"], approved_by=people["safety"],
        )  # fmt: skip

    assert league_publish().bans == 2
    evaluations = ExchangeRecord.objects.filter(club=club, action="evaluate")
    assert sum(evaluations.values_list("count", flat=True)) == 4  # two a ban, the filler too
    tokens = [set(b.tokens.values_list("token", flat=True)) for b in PublishedBan.objects.all()]
    assert [len(held) for held in tokens] == [2, 2] and not tokens[0] & tokens[1]

    assert league_publish().bans == 2
    assert sum(evaluations.values_list("count", flat=True)) == 4  # nothing evaluated again
    assert not ExchangeRecord.objects.filter(action="unusual").exists()
    again = [set(b.tokens.values_list("token", flat=True)) for b in PublishedBan.objects.all()]
    assert again == tokens  # the filler's token is the same at every publication
