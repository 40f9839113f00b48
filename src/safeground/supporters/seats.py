"""Every seat's short code, for its QR code and its URL (`/s/<code>`): "K7QD3XJ-20".

The first six characters are the block's, drawn at random once and kept by the ground's and the
block's codes (BlockSeatCodes): a venue file imported again (new ids) keeps the codes printed on
seat backs, and no block's codes can be found by counting from another's. The row and the seat
follow as the seat back says them, so the plan's rows and seats say whether a code names a real
seat and no table of 57,000 codes is kept. Crockford's base 32 (no I, L, O or U) for the random
part: nothing to misread off a seat back.

Codes of the first kind named the block by its database id (digits only, no dash): they are
still read (old sheets and programmes keep working) while SAFEGROUND_SUPPORTERS_ID_SEAT_CODES is
on, and the page sends the supporter on to the seat's code of today.
"""

import secrets
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction

from safeground.kept import Kept
from safeground.venues.models import Block

from .models import BlockSeatCodes

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
BLOCK_PART = 6  # 32**6: a thousand million; a ground has a few hundred blocks
MAX_CODE = BLOCK_PART + 10 + 1 + 4  # the block's part, a row, a dash, a seat
# The blocks by their codes' part, all read in one go, and the part by block, kept
# SAFEGROUND_LOG_CACHE_SECONDS as the log keeps its places: a flood's reports come from a stand's
# blocks and the whole ground's, and a read of each block as its keeping ran out took about 5% of
# a flood's server CPU (bench_supporters, py-spy), and a connection for requests that need none.
_blocks_by_part = Kept("SAFEGROUND_LOG_CACHE_SECONDS")
_blocks = Kept("SAFEGROUND_LOG_CACHE_SECONDS")  # by id, for codes of the first kind
_parts = Kept("SAFEGROUND_LOG_CACHE_SECONDS")
# The first kind of code: (block id * MAX_ROWS + row index) * MAX_SEATS + seat, in base 32.
MAX_ROWS = 100
MAX_SEATS = 1000
MAX_ID_CODE = 13


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


def _normal(code: str) -> str:
    """As typed off a seat back: any case, O for 0 and I or L for 1."""
    return code.strip().upper().replace("O", "0").replace("I", "1").replace("L", "1")


def block_part(block: Block) -> str:
    """The block's part of its seats' codes, drawn the first time a code of the block is asked
    for (printing its sheet) and kept by the ground's and block's codes from then on."""
    return _parts.get(block.pk, lambda: _block_part_read_or_draw(block))


def _block_part_read_or_draw(block: Block) -> str:
    where = {"ground_code": block.ground.code, "block_code": block.code}
    for _attempt in range(5):
        kept = BlockSeatCodes.objects.filter(**where).values_list("code", flat=True).first()
        if kept is not None:
            return str(kept)
        drawn = "".join(secrets.choice(ALPHABET) for _ in range(BLOCK_PART))
        try:
            with transaction.atomic():
                BlockSeatCodes.objects.create(**where, code=drawn)
            return drawn
        except IntegrityError:  # drawn by another block, or this block's by another process
            continue
    raise RuntimeError(f"no seat code could be drawn for block {block.code}")


def seat_code(block: Block, row: str, number: int) -> str:
    if row not in block.rows:
        raise ValueError(f"block {block.code} has no row {row!r}")
    return f"{block_part(block)}{row}-{number}"


def seat_numbers(block: Block) -> range:
    return range(block.first_seat, block.first_seat + block.seats_per_row)


def seat_at(code: str) -> Seat | None:
    """The seat a code names, or None (not a code, or no such seat)."""
    code = code.strip()
    if "-" not in code:
        return _seat_by_id_code(code) if settings.SAFEGROUND_SUPPORTERS_ID_SEAT_CODES else None
    if not BLOCK_PART + 2 < len(code) <= MAX_CODE:
        return None
    part = _normal(code[:BLOCK_PART])
    row, _, number = code[BLOCK_PART:].rpartition("-")
    if any(c not in ALPHABET for c in part) or not number.isdigit():
        return None
    known = _blocks_by_part.get("all", _blocks_with_codes)
    block = known[part] if part in known else _block_by_part(part)  # drawn a moment ago
    if block is None:
        return None
    rows = {r.upper(): r for r in block.rows}
    if row.upper() not in rows or int(number) not in seat_numbers(block):
        return None
    return Seat(block, rows[row.upper()], int(number))


def _blocks_with_codes() -> dict[str, Block]:
    """Every block whose seats have codes, by its codes' part: two statements."""
    parts = {
        (ground_code, block_code): code
        for code, ground_code, block_code in BlockSeatCodes.objects.values_list(
            "code", "ground_code", "block_code"
        )
    }
    blocks = Block.objects.filter(ground__code__in={g for g, _b in parts}).select_related(
        "ground", "tier__stand"
    )
    return {parts[(b.ground.code, b.code)]: b for b in blocks if (b.ground.code, b.code) in parts}


def _block_by_part(part: str) -> Block | None:
    names = BlockSeatCodes.objects.filter(code=part).values_list("ground_code", "block_code")
    if not (found := names.first()):
        return None
    ground_code, block_code = found
    return (
        Block.objects.filter(ground__code=ground_code, code=block_code)
        .select_related("ground", "tier__stand")
        .first()
    )


def _seat_by_id_code(code: str) -> Seat | None:
    """A code of the first kind (the block by its id), read as it always was."""
    code = _normal(code)
    if not 0 < len(code) <= MAX_ID_CODE or any(c not in ALPHABET for c in code):
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
