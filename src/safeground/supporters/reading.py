"""How the text line reads a text written the way fans write them.

The category: every category word anywhere in the text (English or Welsh), the most severe one
winning (categories.severity), a specific word before a general one ("racist abuse" is racist
abuse, not abuse in general; "HELP" says nothing of what is wrong), then the first written.

The place: the block as the ground names it, in any of the ways fans give it ("block N-L3",
"blk nl3", "NL3", "north lower 3", "lower tier north stand block 3", "bloc 3 eisteddle'r
gogledd isaf"), with its row and seat ("row K seat 23", "rw k st 23", "K23", "rhes K sedd 23"),
in any order. Each row and seat belongs to the block written nearest it; of two blocks, the one
the trouble is in wins over the one the texter says they are in ("I'm in N-L1, fight in N-L2").

Prefixes ("SFCReport", "report:") are stripped, emoji ignored, accents optional. Nothing here
reads the database but `GroundPlan.of_ground`: the bench and the corpus test read the same plan
from the ground's venue file.
"""

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

from safeground.venues.models import Block, Ground
from safeground.venues.venue_file.specs import VenueSpec

from .categories import CATEGORIES, severity

# Category words, as regular expressions over the folded text (lower case, no accents). A
# general word (the second set) decides only when no specific word of that severity is there.
# fmt: off
WORDS: dict[str, tuple[str, ...]] = {
    "medical": (
        r"medical", r"medic", r"collaps\w*", r"fainted", r"faint(?:ing)?", r"passed out",
        r"unconscious", r"not breathing", r"(?:cant|can't|cannot) breathe", r"seizure",
        r"having a fit", r"heart attack", r"ambulance", r"paramedic\w*", r"first aid",
        r"bleeding", r"blood", r"injur\w*", r"hurt", r"asthma\w*", r"diabetic", r"hypo",
        r"needs? a doctor", r"doctor", r"chest pains?", r"ill", r"breath\w*", r"unwell",
        r"not moving", r"unresponsive", r"not responding", r"fallen",
        # Welsh
        r"meddygol", r"llewygu", r"wedi llewygu", r"anymwybodol", r"gwaedu", r"ambiwlans",
        r"cymorth cyntaf", r"anaf\w*", r"trawiad", r"sal", r"ddim yn anadlu", r"meddyg",
        r"wedi cwympo", r"cwympo",
    ),
    "crowding": (
        r"crush\w*", r"crowding", r"overcrowd\w*", r"too many people", r"too busy", r"packed",
        r"surg\w*", r"no room", r"(?:cant|can't|cannot) move", r"crammed", r"rammed",
        r"pushing", r"squash\w*", r"blocking (?:the )?(?:exits?|stairs|gangways?|aisles?)",
        # Welsh
        r"gwasgfa", r"gorlawn", r"gormod o bobl", r"methu symud", r"gwthio", r"gwasgu",
    ),
    "violence": (
        r"violen\w*", r"fight\w*", r"fought", r"punch\w*", r"assault\w*", r"attack\w*",
        r"threat\w*", r"brawl\w*", r"scuffle\w*", r"kick(?:ed|ing) off", r"kicking", r"going off",
        r"throw\w* punch\w*", r"headbutt\w*", r"knife", r"glassed", r"hitting",
        r"hit (?:a|him|her|someone|me)",
        r"swinging", r"battering", r"aggressive", r"trouble",
        # Welsh
        r"ymladd", r"trais", r"bygwth\w*", r"dyrnu", r"ymosod\w*", r"cicio", r"cyllell",
        r"treisgar", r"helynt",
    ),
    "missile": (
        r"missile\w*", r"throw\w*", r"threw", r"thrown", r"lobb\w*", r"chuck\w*", r"coins?",
        r"lighters? thrown", r"bottles? thrown",
        # Welsh
        r"taflu", r"taflwyd", r"darnau arian", r"ceiniog\w*",
    ),
    "pyrotechnics": (
        r"pyro\w*", r"flares?", r"smoke ?bombs?", r"smoke grenades?", r"fireworks?", r"bangers?",
        r"flare lit",
        # Welsh
        r"ffler\w*", r"tan gwyllt", r"bom mwg", r"bomiau mwg",
    ),
    "abuse-racist": (
        r"racis\w*", r"racial\w*", r"monkey (?:chants?|noises?|gestures?)", r"n[\s-]?word",
        # Welsh
        r"hiliol", r"hiliaeth",
    ),
    "abuse-homophobic": (
        r"homophob\w*", r"transphob\w*", r"anti[\s-]?gay", r"biphob\w*",
        # Welsh
        r"homoffob\w*", r"trawsffob\w*",
    ),
    "abuse-antisemitic": (
        r"anti[\s-]?semit\w*", r"antisemit\w*", r"anti[\s-]?jewish", r"jew hating",
        # Welsh
        r"gwrth[\s-]?semit\w*",
    ),
    "abuse-religious": (
        r"sectarian\w*", r"islamophob\w*", r"anti[\s-]?muslim", r"anti[\s-]?catholic",
        r"religious abuse", r"religio\w*",
        # Welsh
        r"sectyddol", r"c?h?refyddol", r"grefyddol", r"gwrth[\s-]?fwslim\w*",
    ),
    "abuse-sexist": (
        r"sexis\w*", r"misogyn\w*", r"sexual comments?", r"wolf whistl\w*",
        # Welsh
        r"rhywiaeth\w*",
    ),
    "abuse-disability": (
        r"disab\w*", r"ableis\w*", r"mocking (?:a )?disabled", r"wheelchair user",
        # Welsh
        r"anabl\w*",
    ),
    "drunk": (
        r"drunk\w*", r"pissed", r"hammered", r"wasted", r"steaming", r"legless", r"intoxicated",
        r"bladdered", r"plastered", r"too much to drink", r"smashed out of",
        # Welsh
        r"meddw\w*", r"feddw\w*", r"wedi meddwi",
    ),
    "smoking": (
        r"smok\w*", r"vap\w*", r"cigarettes?", r"cigs?", r"fags?", r"spliff", r"weed",
        # Welsh
        r"ysmygu", r"smocio", r"sigaret\w*", r"fepio",
    ),
    "standing": (
        r"standing", r"stood up", r"stand up", r"won'?t sit(?: down)?", r"wont sit",
        r"refus\w* to sit", r"not sitting", r"blocking (?:the|my|our) view",
        # Welsh
        r"sefyll", r"gwrthod eistedd",
    ),
    "other": (r"foul language", r"swear\w*", r"rhegi"),
}
GENERAL: dict[str, tuple[str, ...]] = {
    "abuse-other": (
        r"abus\w*", r"discriminat\w*", r"slurs?", r"chant\w*", r"offensive", r"hateful",
        r"(?:c|ch|g|ng)amdrin\w*", r"sarhaus", r"gwahaniaeth\w*",
    ),
    "other": (r"help", r"helpu", r"problem\w*", r"issue"),
}
# fmt: on
_ORDER = {c.code: n for n, c in enumerate(CATEGORIES)}
_PATTERNS = [
    (severity(code), general, _ORDER[code], code, re.compile(rf"\b(?:{'|'.join(words)})\b"))
    for general, table in ((0, WORDS), (1, GENERAL))
    for code, words in table.items()
]

# A prefix clubs advertise ("SFCReport"), or a texter's "report:" / "Adroddiad -".
_PREFIX = re.compile(
    r"^\W*(?:[a-z]{2,5}report|report(?:ing)?|adroddiad|urgent|brys)\b\s*[:\-–]?\s*", re.I
)

# The place, over the folded text.
_BLOCK_WORD = r"(?:block|blk|blck|blok|bloc|bl|bk|section|sect|sec)"
_CODE = r"(?:[a-z]{1,3}[\s/-]?){0,2}\d{1,4}[a-z]?\b|[a-z]\b"
_BLOCK = re.compile(rf"\b{_BLOCK_WORD}\b\.?\s*(?:no\.?|number|#)?\s*[:#-]?\s*({_CODE})")
_NOT_ROW = r"(?!(?:of|is|in|on|at|to|by|we|me|up|so|no|an|as|be|he|it|my|or|us|yn|ar|o)\b)"
_ROW = re.compile(
    rf"\b(?:row|rw|rhes)\b\.?\s*(?:no\.?|#)?\s*[:#-]?\s*{_NOT_ROW}([a-z]{{1,2}}|\d{{1,3}})\b"
)
# A code written bare, tried at every word ("the nl3" holds "nl3"): kept when the ground has it.
_BARE = re.compile(r"\b(?=([a-z]{1,3}[\s-]?[a-z]{0,3}[\s-]?\d{1,4}[a-z]?)\b)")
_SEAT = re.compile(
    r"\b(?:seat|seats|st|sedd|seddi|set)\b\.?\s*(?:no\.?|number|#)?\s*[:#-]?\s*(\d{1,4})\b"
)
_ROW_SEAT = re.compile(r"^\s*[,/]?\s*([a-z]{1,2})[\s/-]?(\d{1,4})\b")  # "N-L3 K23", "112/K/23"
# Words that say the place is the texter's own, not the trouble's.
_OWN = re.compile(
    r"(?:\bi'?m|\bi am|\bwe'?re|\bwe are|\bsat|\bsitting|\bmy seat(?: is)?|\bdw i|\brwy'?n"
    r"|\brydw i|\brydyn ni|\bdyn ni|\bim)\s+(?:in|at|yn|ym|sat in)?\s*(?:the\s+)?$"
)
# Words that say the trouble has moved there ("moved from W-U5 to W-U6").
_MOVED = re.compile(
    r"(?:\bnow (?:in|at)|\b(?:moved|gone|went|headed|run|ran)\b[^.!?]{0,24}?\b(?:in)?to)"
    r"\s*(?:the\s+)?$"
)
# Welsh words for the stands' sides and the tiers, read as the ground's English names.
_WELSH_PLACE = {
    "gogledd": "north", "de": "south", "dwyrain": "east", "gorllewin": "west",
    "isaf": "lower", "uchaf": "upper", "uwch": "upper",
}  # fmt: skip
_STAND_NOISE = {"stand", "end", "the", "eisteddle", "eisteddler", "haen", "tier", "r", "y", "yr"}
# Distinctive words of a Welsh text (not ones English shares: "a", "i", "o").
_WELSH = {
    "mae", "yn", "wedi", "ac", "yr", "sy", "sydd", "dyn", "ddyn", "menyw", "plentyn", "rhywun",
    "angen", "plis", "diolch", "bloc", "rhes", "sedd", "ger", "eisteddle", "ymladd", "hiliol",
    "meddw", "ysmygu", "sefyll", "taflu", "gwasgfa", "meddygol", "llewygu", "ambiwlans",
    "cymorth", "cyntaf", "homoffobig", "pobl", "gan", "ni", "chi", "fi", "nhw", "hefyd", "ond",
    "am", "ar", "dim", "ddim", "gwaedu", "anymwybodol", "canu", "rhegi", "dynion", "cefn",
    "blaen", "ydy", "oes", "roedd", "newydd", "iawn", "gyda",
}  # fmt: skip
_ENGLISH = {
    "the", "is", "in", "and", "of", "at", "someone", "man", "men", "woman", "there", "row",
    "seat", "block", "he", "she", "they", "been", "has", "have", "are", "was", "with", "from",
    "near", "behind", "by", "our", "my", "me", "please", "this", "think", "need", "guy", "lad",
    "it's", "its",
}  # fmt: skip


def fold(text: str) -> str:
    """Lower case, accents off, emoji and symbols as spaces: one character for each of `text`'s,
    so a place found in the folded text is cut from the text at the same place."""
    out = []
    for char in unicodedata.normalize("NFC", text):
        kind = unicodedata.category(char)
        if kind in {"So", "Sk", "Cf", "Co", "Cs", "Mn", "Me"} or char in "\ufe0e\ufe0f":
            out.append(" ")
            continue
        bare = "".join(
            c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c)
        ).lower()
        out.append(bare if len(bare) == 1 else char.lower()[:1] or " ")
    return "".join(out).replace("\u2019", "'").replace("\u2018", "'")


def _alnum(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


@dataclass(frozen=True)
class PlanBlock:
    code: str
    name: str
    stand: str  # the stand's name: "North Stand"
    tier: str  # the tier's name: "Lower tier"
    rows: tuple[str, ...] = ()


@dataclass
class GroundPlan:
    """The ground's blocks as the text line reads them: by code in any spelling, or by stand,
    tier and number as the ground names them."""

    blocks: list[PlanBlock]
    by_code: dict[str, PlanBlock] = field(init=False)
    by_name: dict[tuple[str, str, str], list[PlanBlock]] = field(init=False)
    sides: set[str] = field(init=False)
    tiers: set[str] = field(init=False)
    named_pattern: re.Pattern[str] | None = field(init=False)
    place_words: re.Pattern[str] | None = field(init=False)

    def __post_init__(self) -> None:
        self.by_code = {_alnum(b.code): b for b in self.blocks}
        self.by_name = {}
        self.sides, self.tiers = set(), set()
        for block in self.blocks:
            side, tier = _words(block.stand), _words(block.tier)
            number = re.search(r"(\d+)\D*$", block.code) or re.search(r"(\d+)\D*$", block.name)
            self.sides.update(side)
            self.tiers.update(tier)
            if number is None:
                continue
            n = str(int(number[1]))
            for s in [*side, ""]:
                for t in [*tier, ""]:
                    self.by_name.setdefault((s, t, n), []).append(block)
        self.named_pattern = _named_pattern(self.sides, self.tiers)
        words = self.sides | self.tiers
        words |= {k for k, v in _WELSH_PLACE.items() if v in words}
        self.place_words = (
            re.compile(
                rf"\b(?:{'|'.join(sorted(words))})\b(?:\s+(?:stand|tier|end)\b)?"
                r"|\beisteddle'?r?\b|\bhaen\b"
            )
            if words
            else None
        )

    @classmethod
    def of_ground(cls, ground: Ground) -> "GroundPlan":
        rows = Block.objects.filter(ground=ground).select_related("tier__stand").order_by("code")
        return cls(
            [PlanBlock(b.code, b.name, b.tier.stand.name, b.tier.name, tuple(b.rows)) for b in rows]
        )

    @classmethod
    def of_venue(cls, venue: VenueSpec) -> "GroundPlan":
        """From a venue file as read (venue_file.venue_file_read): the bench's and the tests'."""
        stands = {s.code: s for s in venue.stands}
        tiers = {(s.code, t.code): t.name for s in stands.values() for t in s.tiers}
        return cls(
            [
                PlanBlock(
                    b.code, b.name, stands[b.stand].name, tiers[b.stand, b.tier], tuple(b.rows)
                )
                for b in sorted(venue.blocks, key=lambda b: b.code)
            ]
        )

    def example(self) -> tuple[str, str, str]:
        """A real place at this ground for the question "where are you?": block, row, seat."""
        if not self.blocks:
            return "", "", ""
        block = self.blocks[0]
        row = block.rows[min(len(block.rows) - 1, 5)] if block.rows else ""
        return block.code, row, "12"

    def named(self, token: str, context: str, at: int = 0) -> PlanBlock | None:
        """The block a code names ("N-L3", "nl3", "112"), or a number with its stand and tier
        written near it ("north lower 3", "block 3 upper tier east stand"): of two sides or
        tiers written, the one nearest the number (at `at` in `context`)."""
        if found := self.by_code.get(_alnum(token)):
            return found
        number = re.fullmatch(r"\s*(\d{1,4})\s*", token)
        if number is None:
            return None
        nearest: dict[str, tuple[int, str]] = {}
        for word in re.finditer(r"[a-z]+", context):
            name = _WELSH_PLACE.get(word[0], word[0])
            kind = "side" if name in self.sides else "tier" if name in self.tiers else ""
            distance = abs(word.start() - at)
            if kind and distance < nearest.get(kind, (len(context) + 1, ""))[0]:
                nearest[kind] = (distance, name)
        side, tier = nearest.get("side", (0, ""))[1], nearest.get("tier", (0, ""))[1]
        found_all = self.by_name.get((side, tier, str(int(number[1]))), [])
        return found_all[0] if len(found_all) == 1 else None


def _named_pattern(sides: set[str], tiers: set[str]) -> re.Pattern[str] | None:
    """A block by its stand's side, its tier and its number, in either order, in English or
    Welsh ("north lower 3", "upper tier east stand block 4", "eisteddle'r gogledd isaf 3")."""
    if not sides and not tiers:
        return None
    side = "|".join(sorted(sides | {k for k, v in _WELSH_PLACE.items() if v in sides}))
    tier = "|".join(sorted(tiers | {k for k, v in _WELSH_PLACE.items() if v in tiers}))
    filler = r"(?:[\s,\-]|stand\b|end\b|tier\b|the\b|eisteddle'?r?\b|haen\b)*"
    either = rf"(?:{side}){filler}(?:{tier})|(?:{tier}){filler}(?:{side})|(?:{side})|(?:{tier})"
    return re.compile(rf"\b(?:{either}){filler}\s*(?:{_BLOCK_WORD}\s*)?(\d{{1,3}})\b")


def _words(name: str) -> list[str]:
    return [w for w in re.findall(r"[a-z]+", fold(name)) if w not in _STAND_NOISE]


@dataclass(frozen=True)
class Reading:
    category: str
    block: str  # the ground's code when the plan knows it, else as written (upper case)
    row: str
    seat: str
    text: str  # the words left: what they saw
    language: str  # "cy" or "en"
    keyword: bool = False  # a category named (not "other" for want of a word)
    known: bool = False  # the block is one of the ground's


@dataclass
class _Place:
    start: int
    end: int
    token: str
    block: PlanBlock | None
    own: bool = False
    moved: bool = False
    row: str = ""
    seat: str = ""
    spans: list[tuple[int, int]] = field(default_factory=list)


def message_read(body: str, plan: GroundPlan | None = None) -> Reading:
    """The category, the place and the words of one text (module docstring)."""
    text = fold(body)
    prefix = _PREFIX.match(text)
    start = prefix.end() if prefix else 0
    category, keyword, lead = _category(text, start)
    places = _places(text, plan or GroundPlan([]))
    chosen = _chosen(places)
    cut = [(p.start, p.end) for p in ([chosen] if chosen else [])]
    if chosen is not None:
        cut += chosen.spans
    if lead is not None and _keyword_form(body, text, lead, cut):
        cut.append(lead)
    words = _left(body, text, start, cut)
    return Reading(
        category=category,
        block=_block_named(chosen),
        row=chosen.row.upper() if chosen else "",
        seat=chosen.seat if chosen else "",
        text=words,
        language=language_of(text),
        keyword=keyword,
        known=bool(chosen and chosen.block),
    )


def _block_named(place: "_Place | None") -> str:
    if place is None:
        return ""
    return place.block.code if place.block else place.token.upper()


def _keyword_form(
    body: str, text: str, lead: tuple[int, int], places: list[tuple[int, int]]
) -> bool:
    """A leading category word written as a keyword ("RACISM ...", "Medical - ...", "smoking
    block 3 ..."): cut from the words, which the category already says. One that begins the
    sentence ("fight in S-L2") stays."""
    a, b = lead
    after = len(text[b:]) - len(text[b:].lstrip())
    return (
        unicodedata.normalize("NFC", body)[a:b].isupper()
        or text[b:].lstrip()[:1] in set("-.!:,;")
        or any(start == b + after for start, _end in places)
    )


def _chosen(places: list["_Place"]) -> "_Place | None":
    """The trouble's place: a block of the ground before one it has not, where the trouble
    moved to, the trouble's before the texter's own, then the first written."""
    ranked = sorted(places, key=lambda p: (p.block is None, not p.moved, p.own, p.start))
    return ranked[0] if ranked else None


def _category(text: str, start: int) -> tuple[str, bool, tuple[int, int] | None]:
    """The most severe category named, whether one was, and the span of a leading keyword
    (cut from the words: "RACISM block 3 man in red" leaves "man in red")."""
    found: list[tuple[int, int, int, int, str, int]] = []  # severity, general, at, order, code, end
    for rank, general, order, code, pattern in _PATTERNS:
        for match in pattern.finditer(text, start):
            found.append((rank, general, match.start(), order, code, match.end()))
    if not found:
        return "other", False, None
    best = min(found)
    code = best[4]
    named = not (code == "other" and best[1])
    first = min(found, key=lambda f: f[2])
    lead = (first[2], first[5]) if not text[start : first[2]].strip(" .,:;!-") else None
    return code, named, lead


def _places(text: str, plan: GroundPlan) -> list[_Place]:
    places: list[_Place] = []
    taken: list[tuple[int, int]] = []
    for match in _BLOCK.finditer(text):
        token = match[1].strip()
        places.append(_Place(match.start(), match.start(1) + len(token), token, None))
    for place in places:
        taken.append((place.start, place.end))
    # A code written bare ("NL3", "n-l3", "s u2") or a stand's name with tier and number.
    for match in _BARE.finditer(text):
        span = (match.start(), match.start() + len(match[1]))
        if _inside(span, taken) or not re.search(r"[a-z]", match[1]):
            continue
        if plan.by_code.get(_alnum(match[1])) is None:
            continue
        places.append(_Place(*span, match[1], None))
        taken.append(span)
    if plan.named_pattern is not None:
        for match in plan.named_pattern.finditer(text):
            if _inside(match.span(), taken):
                continue
            places.append(_Place(match.start(), match.end(), match[1], None))
            taken.append(match.span())
    places.sort(key=lambda p: p.start)
    for n, place in enumerate(places):
        lo = places[n - 1].end if n else 0
        hi = places[n + 1].start if n + 1 < len(places) else len(text)
        context = text[lo:hi]
        place.block = plan.named(place.token, context, place.start - lo)
        if place.block is not None and plan.place_words is not None and place.token.isdigit():
            # The stand and tier that named it are the place, not what was seen.
            place.spans += [
                (lo + m.start(), lo + m.end()) for m in plan.place_words.finditer(context)
            ]
        place.own = bool(_OWN.search(text[max(lo, place.start - 16) : place.start]))
        place.moved = bool(_MOVED.search(text[max(0, place.start - 40) : place.start]))
    _rows_and_seats(text, places, taken)
    # One place written twice ("N-L3 ... north lower 3") is one place.
    unique: list[_Place] = []
    for place in places:
        same = next((u for u in unique if u.block and u.block == place.block), None)
        if same is None:
            unique.append(place)
        else:
            same.row, same.seat = same.row or place.row, same.seat or place.seat
            same.spans.append((place.start, place.end))
    return unique


def _rows_and_seats(text: str, places: list[_Place], taken: list[tuple[int, int]]) -> None:
    """Each row and seat to the block written nearest it (before it when as near)."""
    if not places:
        return
    for attr, pattern in (("row", _ROW), ("seat", _SEAT)):
        for match in pattern.finditer(text):
            if _inside(match.span(), taken):
                continue
            nearest = min(
                places, key=lambda p: (_distance(p, match.start()), p.start > match.start())
            )
            if not getattr(nearest, attr):
                setattr(nearest, attr, match[1])
                nearest.spans.append(match.span())
    for place in places:
        compact = _ROW_SEAT.match(text[place.end :])
        if compact and not place.row and not place.seat:
            rows = place.block.rows if place.block else ()
            if compact[1].upper() in rows:
                place.row, place.seat = compact[1], compact[2]
                place.spans.append((place.end + compact.start(1), place.end + compact.end(2)))


def _distance(place: _Place, at: int) -> int:
    return place.start - at if at < place.start else max(0, at - place.end)


def _inside(span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    return any(a < span[1] and span[0] < b for a, b in taken)


_HANGING = r"(?:in|at|from|on|near|by|to|yn|ym|o|ger)"


def _left(body: str, folded: str, start: int, cut: list[tuple[int, int]]) -> str:
    """The words of the text but the prefix, the leading keyword and the place (emoji gone)."""
    body = unicodedata.normalize("NFC", body)
    chars = [c if f != " " or c.isspace() else " " for c, f in zip(body, folded, strict=False)]
    for a, b in cut:
        chars[a:b] = [" "] * (b - a)
    words = "".join(chars[start:])
    words = re.sub(r"\s+", " ", words)
    words = re.sub(r"\s+([,.;:!?])", r"\1", words)
    words = re.sub(r"([,.;:])(?:\s*[,.;:])+", r"\1", words)
    # A word left hanging where the place was cut ("flare lit in", "Mae dyn wedi llewygu yn").
    words = re.sub(
        rf"^{_HANGING}\s+|\s+{_HANGING}$|^{_HANGING}$", "", words.strip(" ,.;:-!&/"), flags=re.I
    )
    return words.strip(" ,.;:-!&/").strip()


def language_of(folded: str) -> str:
    """ "cy" for a text more Welsh than English by its distinctive words, else "en"."""
    words = re.findall(r"[a-z']+", folded)
    welsh = sum(w.strip("'") in _WELSH for w in words)
    english = sum(w in _ENGLISH for w in words)
    return "cy" if welsh > english else "en"


def plan_blocks(blocks: Iterable[PlanBlock]) -> GroundPlan:
    return GroundPlan(list(blocks))
