"""The format of the tickets a ground's issuing system prints: a prefix, a length, and a check
(a Luhn mod-10 check digit, or an HMAC signature). A barcode that fits it but is on no match's
list is a forged ticket (entry.rules' `forged`); one that does not fit is plainly not a ticket
(`unknown_ticket`). Checked on every scan in Python, a few microseconds, before the decision's
one statement: the statement only reads the answer (docs/adr/0025-gate-pressure.md).

The HMAC key is a secret of the issuing system, so it is not in the database (backups, the venue
file): SAFEGROUND_TICKET_KEYS gives it per ground code. A signed barcode is the prefix, a body,
and the first `HMAC_DIGITS` hex digits of HMAC-SHA256(key, prefix + body), in upper case.
"""

import hashlib
import hmac
from dataclasses import dataclass

from django.conf import settings

CHECKS = ("none", "luhn", "hmac")
HMAC_DIGITS = 8


@dataclass(frozen=True)
class TicketFormat:
    prefix: str = ""
    length: int = 0  # 0: any length
    check: str = "none"  # one of CHECKS
    key: bytes = b""  # the HMAC key (check "hmac")

    @property
    def set(self) -> bool:
        """A ground with no format set has no forged reason: every unknown barcode is unknown."""
        return bool(self.prefix or self.length or self.check != "none")

    def fits(self, barcode: str) -> bool:
        if not self.set or not barcode.startswith(self.prefix):
            return False
        if self.length and len(barcode) != self.length:
            return False
        if self.check == "luhn":
            return luhn_valid(barcode[len(self.prefix) :])
        if self.check == "hmac":
            return bool(self.key) and hmac_valid(barcode, self.prefix, self.key)
        return True


def luhn_valid(digits: str) -> bool:
    """The Luhn mod-10 check over a string of digits (its last digit is the check digit)."""
    if len(digits) < 2 or not digits.isdigit():
        return False
    total = 0
    for n, char in enumerate(reversed(digits)):
        d = int(char)
        if n % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def luhn_digit(digits: str) -> str:
    """The check digit that makes `digits` + it pass the Luhn check (for test and demo tickets)."""
    return next(c for c in "0123456789" if luhn_valid(digits + c))


def hmac_signature(text: str, key: bytes) -> str:
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()[:HMAC_DIGITS].upper()


def hmac_valid(barcode: str, prefix: str, key: bytes) -> bool:
    body, signature = barcode[:-HMAC_DIGITS], barcode[-HMAC_DIGITS:]
    if len(body) <= len(prefix):
        return False
    return hmac.compare_digest(hmac_signature(body, key), signature)


def ticket_format(*, ground_code: str, prefix: str, length: int, check: str) -> TicketFormat:
    """A ground's format from its fields, with its HMAC key from the settings."""
    key = str(getattr(settings, "SAFEGROUND_TICKET_KEYS", {}).get(ground_code, "")).encode()
    return TicketFormat(prefix=prefix, length=length, check=check, key=key)
