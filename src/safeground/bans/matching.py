"""Matching ticket holders against bans: fuzzy names plus date of birth, fast.

Bans are indexed by date of birth, so a holder is only compared with the bans of people born on
the same day (a strong reason) or on the day with day and month swapped (a weaker one: a common
slip between UK and US date order). Names are folded first: accents, apostrophes and case are
ignored, letters with no decomposition are spelt out (Ł as L, ß as ss, Æ as AE), hyphens split
words, and words are sorted, so "Seán O'Reilly-Dunne" and "Dunne Sean Oreilly" compare as equal.
A namesake born on another day is never even compared.

Pure functions over plain data; the services load the rows and write the flags.
"""

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

from rapidfuzz import fuzz

# Taken off an effective score when only the swapped date of birth fits.
SWAPPED_PENALTY = 10.0
# A name with words missing (a middle name left off) is alike, but a little less so.
SUBSET_FACTOR = 0.95

_APOSTROPHES = re.compile(r"['’‘`´ʼ]")
_HYPHENS = re.compile(r"[-‐‑–—]")
_SEPARATORS = re.compile(r"[^a-z0-9]+")


# Letters Unicode does not decompose into a base letter and an accent: NFKD leaves them whole,
# so without this table they fall out as separators ("Łukasz" would become "ukasz").
_NO_DECOMPOSITION = str.maketrans(
    {
        "Ł": "L", "ł": "l", "Ø": "O", "ø": "o", "Đ": "D", "đ": "d", "Ð": "D", "ð": "d",
        "ß": "ss", "ẞ": "SS", "Æ": "AE", "æ": "ae", "Œ": "OE", "œ": "oe", "Þ": "TH", "þ": "th",
        "ı": "i", "Ħ": "H", "ħ": "h", "Ŧ": "T", "ŧ": "t", "Ŋ": "N", "ŋ": "n", "ĸ": "k",
        "Ɨ": "I", "ɨ": "i", "Ƶ": "Z", "ƶ": "z", "Ɖ": "D", "ɖ": "d", "Ə": "E", "ə": "e",
    }
)  # fmt: skip


def _fold(name: str) -> str:
    if name.isascii():  # most names: nothing to decompose (and the fastest path)
        return _APOSTROPHES.sub("", name.lower())
    folded = unicodedata.normalize("NFKD", name.translate(_NO_DECOMPOSITION))
    folded = "".join(c for c in folded if not unicodedata.combining(c)).lower()
    return _APOSTROPHES.sub("", folded)


def _words(folded: str) -> str:
    return " ".join(sorted(_SEPARATORS.sub(" ", folded).split()))


def name_key(name: str) -> str:
    """Lower case, accents folded, apostrophes dropped, hyphens and punctuation as spaces, words
    sorted: the form names are compared in."""
    return _words(_fold(name))


def name_keys(name: str) -> tuple[str, ...]:
    """name_key, and when the name is hyphenated also the form with the parts joined
    ("Marlow-Keys" as "marlowkeys"), so a double-barrelled name written as one word still fits."""
    folded = _fold(name)
    keys = [_words(folded)]
    if _HYPHENS.search(folded):
        joined = _words(_HYPHENS.sub("", folded))
        if joined != keys[0]:
            keys.append(joined)
    return tuple(keys)


def keys_score(a: tuple[str, ...], b: tuple[str, ...]) -> float:
    """The best name_score over the forms of two names."""
    return max(name_score(x, y) for x in a for y in b)


def swapped(day: date) -> date | None:
    """The date with day and month swapped, when that is another real date."""
    if day.day == day.month or day.day > 12:
        return None
    try:
        return day.replace(month=day.day, day=day.month)
    except ValueError:  # pragma: no cover - day <= 12 always makes a valid month
        return None


def name_score(a: str, b: str) -> float:
    """How alike two folded names are, 0-100."""
    score = fuzz.ratio(a, b)
    if score < 100 and min(a.count(" "), b.count(" ")) >= 1:
        # Both have two words or more: a missing middle name should not sink the match.
        score = max(score, fuzz.token_set_ratio(a, b) * SUBSET_FACTOR)
    return float(score)


@dataclass(frozen=True)
class Holder:
    ticket_id: int
    name: str
    date_of_birth: date


@dataclass(frozen=True)
class Banned:
    ban_id: int
    name: str
    date_of_birth: date


@dataclass(frozen=True)
class Candidate:
    ticket_id: int
    ban_id: int
    score: float
    reasons: tuple[str, ...]


class BanIndex:
    """Bans by date of birth, names already folded."""

    def __init__(self, bans: Iterable[Banned]) -> None:
        self.by_dob: dict[date, list[tuple[int, tuple[str, ...]]]] = defaultdict(list)
        for ban in bans:
            self.by_dob[ban.date_of_birth].append((ban.ban_id, name_keys(ban.name)))

    def __len__(self) -> int:
        return sum(len(bans) for bans in self.by_dob.values())

    def candidates(self, holder: Holder, *, threshold: float) -> list[Candidate]:
        found: list[Candidate] = []
        exact = self.by_dob.get(holder.date_of_birth, ())
        other = swapped(holder.date_of_birth)
        weak = self.by_dob.get(other, ()) if other else ()
        if not exact and not weak:
            return found
        keys = name_keys(holder.name)
        for bans, penalty, dob_reason in (
            (exact, 0.0, "same date of birth"),
            (weak, SWAPPED_PENALTY, "date of birth with day and month swapped"),
        ):
            for ban_id, ban_keys in bans:
                alike = keys_score(keys, ban_keys)
                score = round(alike - penalty, 1)
                if score >= threshold:
                    name_reason = (
                        "same name" if alike == 100 else f"name {alike:.0f}% alike"
                    ) + " (accents, apostrophes, hyphens and word order ignored)"
                    reasons = [name_reason, dob_reason]
                    if penalty:
                        reasons.append(f"score lowered by {penalty:.0f} for the swapped date")
                    found.append(Candidate(holder.ticket_id, ban_id, score, tuple(reasons)))
        return found


def match(
    holders: Iterable[Holder], bans: Iterable[Banned], *, threshold: float
) -> list[Candidate]:
    """Every (holder, ban) pair scoring at or above the threshold, best first per holder."""
    index = bans if isinstance(bans, BanIndex) else BanIndex(bans)
    found: list[Candidate] = []
    for holder in holders:
        found.extend(index.candidates(holder, threshold=threshold))
    return found
