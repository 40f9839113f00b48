"""What a person becomes before the exchange sees anything: one input per identity, folded as the
register's matching folds names (bans.matching.name_key: accents, apostrophes, hyphens, case and
word order ignored) and then reduced to its letters in order, so "Sean O Suilleabhain",
"Seán Ó Súilleabháin" and "O'Suilleabhain, Sean" are one input. A banned person gives FORMS
inputs, always (the date of birth as given, and with day and month swapped, or a filler that
matches nobody when it cannot be swapped: the number of tokens says nothing of the birthday);
a ticket holder gives one. Pure functions; the OPRF (exchange/oprf.py) turns inputs into tokens.
"""

import hmac
from datetime import date

from safeground import clock
from safeground.bans.matching import name_key, swapped

# Changing it changes every token: every club publishes again (docs/adr/0015).
DOMAIN = "safeground league ban exchange v1"
# The tokens every published ban has: its date of birth as given, and swapped (or a filler).
FORMS = 2


def letters(name: str) -> str:
    """The folded name's letters and digits, sorted: spacing and word order no longer count."""
    return "".join(sorted(name_key(name).replace(" ", "")))


def identity(name: str, date_of_birth: date) -> bytes:
    return f"{DOMAIN}|{letters(name)}|{clock.day_iso(date_of_birth)}".encode()


def holder_input(name: str, date_of_birth: date) -> bytes:
    """A ticket holder's one input."""
    return identity(name, date_of_birth)


def banned_inputs(name: str, date_of_birth: date, *, filler_key: bytes) -> list[bytes]:
    """A banned person's FORMS inputs: their date of birth as given, and with day and month
    swapped (a common slip between UK and US order), so either way a holder writes it meets
    them. A date that cannot be swapped (the day over 12, or equal to the month) gets a filler
    instead: an input no holder gives (it has no date), unguessable without `filler_key` (the
    club's secret) and the same at every publication, so its token looks like any other."""
    given = identity(name, date_of_birth)
    other = swapped(date_of_birth)
    if other is not None:
        return [given, identity(name, other)]
    filler = hmac.digest(filler_key, given, "sha256").hex()
    return [given, f"{DOMAIN}|filler|{filler}".encode()]
