"""What a person becomes before the exchange sees anything: one input per identity, folded as the
register's matching folds names (bans.matching.name_key: accents, apostrophes, hyphens, case and
word order ignored) and then reduced to its letters in order, so "Sean O Suilleabhain",
"Seán Ó Súilleabháin" and "O'Suilleabhain, Sean" are one input. A banned person gives one input
per date of birth it may be written as (as given, and with day and month swapped); a ticket
holder gives one. Pure functions; the OPRF (exchange/oprf.py) turns inputs into tokens.
"""

from datetime import date

from safeground import clock
from safeground.bans.matching import name_key, swapped

# Changing it changes every token: every club publishes again (docs/adr/0015).
DOMAIN = "safeground league ban exchange v1"


def letters(name: str) -> str:
    """The folded name's letters and digits, sorted: spacing and word order no longer count."""
    return "".join(sorted(name_key(name).replace(" ", "")))


def identity(name: str, date_of_birth: date) -> bytes:
    return f"{DOMAIN}|{letters(name)}|{clock.day_iso(date_of_birth)}".encode()


def holder_input(name: str, date_of_birth: date) -> bytes:
    """A ticket holder's one input."""
    return identity(name, date_of_birth)


def banned_inputs(name: str, date_of_birth: date) -> list[bytes]:
    """A banned person's inputs: their date of birth as given, and with day and month swapped
    (a common slip between UK and US order), so either way a holder writes it meets them."""
    days = [date_of_birth, swapped(date_of_birth)]
    return [identity(name, day) for day in days if day is not None]
