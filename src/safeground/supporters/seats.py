"""Every seat's short code, for its QR code and its URL (`/s/<code>`).

The code is the seat's block, row and number packed into one integer and written in Crockford's
base 32 (no I, L, O or U: nothing to misread off a seat back), so no table of 57,000 codes is
kept: the block's rows and seats say whether a code names a real seat. A code names the block by
its id: importing a ground's venue file again (new ids) needs its sheets printed again.
"""

from dataclasses import dataclass

from safeground.incidents.places import Kept
from safeground.venues.models import Block

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
MAX_ROWS = 100
MAX_SEATS = 1000
MAX_CODE = 13  # characters: a block id far past any ground's
# Blocks by id, kept SAFEGROUND_LOG_CACHE_SECONDS as the log keeps its places: a stand's flood
# of reports reads its blocks once, not once a report.
_blocks = Kept()


@dataclass(frozen=True)
class Seat:
    block: Block
    row: str
    number: int

    @property
    def code(self) -> str:
        return seat_code(self.block, self.row, self.number)

    @property
    def label(self) -> str:
        """As the ticket and the seat back say it: E-L1/A/1."""
        return f"{self.block.code}/{self.row}/{self.number}"


def _encode(value: int) -> str:
    digits = ""
    while True:
        value, digit = divmod(value, 32)
        digits = ALPHABET[digit] + digits
        if value == 0:
            return digits


def seat_code(block: Block, row: str, number: int) -> str:
    row_index = block.rows.index(row)
    return _encode((block.pk * MAX_ROWS + row_index) * MAX_SEATS + number)


def seat_numbers(block: Block) -> range:
    return range(block.first_seat, block.first_seat + block.seats_per_row)


def seat_at(code: str) -> Seat | None:
    """The seat a code names, or None (not a code, or no such seat)."""
    code = code.strip().upper().replace("O", "0").replace("I", "1").replace("L", "1")
    if not 0 < len(code) <= MAX_CODE or any(c not in ALPHABET for c in code):
        return None
    value = 0
    for c in code:
        value = value * 32 + ALPHABET.index(c)
    rest, number = divmod(value, MAX_SEATS)
    block_id, row_index = divmod(rest, MAX_ROWS)
    block = _blocks.get(
        block_id,
        lambda: Block.objects.filter(pk=block_id).select_related("ground", "tier__stand").first(),
    )
    if block is None or row_index >= len(block.rows) or number not in seat_numbers(block):
        return None
    return Seat(block, block.rows[row_index], number)


def block_seats(block: Block) -> list[Seat]:
    return [Seat(block, row, n) for row in block.rows for n in seat_numbers(block)]
