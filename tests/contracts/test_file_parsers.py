"""Properties of the readers of files people bring (hypothesis): the ticket CSV, the venue YAML,
the season's fixtures CSV, the risk policy YAML and a case bundle. Whatever the input, each
either reads it or refuses it with the project's own error, every message naming its line (or
the bundle's member); never another exception, never a hang. Inputs are bounded in size and the
examples derandomized, so the whole module takes seconds and runs the same every time.
"""

import hashlib
import io
import json
import re
import zipfile
from datetime import date
from pathlib import Path

import hypothesis
import pytest
import yaml
from hypothesis import HealthCheck, Phase, given
from hypothesis import strategies as st

from safeground.casework.bundle import MANIFEST, BundleCheck, BundleError, bundle_verify
from safeground.entry.ticket_file import ALIASES, BlockInfo, TicketFileError, parse_tickets
from safeground.errors import FileRefused
from safeground.matches import policy as risk_policy
from safeground.matches.season_file import SeasonFileError, season_file_parse
from safeground.venues.venue_file import VenueFileError, venue_file_parse
from tests import factories

SETTINGS = hypothesis.settings(
    max_examples=150,
    derandomize=True,
    database=None,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],  # a failure prints its input; no shrinking
    suppress_health_check=list(HealthCheck),
)

# --- text and bytes that look like the real files -----------------------------------------------

CSV_PIECES = st.sampled_from(
    [",", ";", "\t", '"', '""', "\n", "\r\n", "\r", " ", "\x00", "\ufeff", "é", "Ł", "-", ":"]
)


def csv_text(columns: list[str], values: list[str]) -> st.SearchStrategy[str]:
    """A header of known and unknown columns, then rows of plausible, odd and broken values."""
    cell = st.one_of(
        st.sampled_from(values),
        st.text(max_size=12),
        st.lists(CSV_PIECES | st.sampled_from(values), max_size=4).map("".join),
    )
    header = st.lists(st.sampled_from(columns) | st.text(max_size=8), min_size=0, max_size=9)
    row = st.lists(cell, max_size=10)
    delimiter = st.sampled_from([",", ";", "\t"])
    return st.builds(
        lambda head, rows, sep: "\n".join(sep.join(fields) for fields in [head, *rows]),
        header,
        st.lists(row, max_size=8),
        delimiter,
    )


def damaged(text: str) -> st.SearchStrategy[str]:
    """A real file with a piece cut out, replaced or repeated, or cut short."""
    size = len(text)
    cut = st.tuples(st.integers(0, size), st.integers(0, 80), st.text(max_size=10))
    return st.one_of(
        cut.map(lambda c: text[: c[0]] + c[2] + text[c[0] + c[1] :]),
        st.integers(0, size).map(lambda at: text[:at]),
        st.tuples(st.integers(0, size), st.integers(0, 200)).map(
            lambda c: text[: c[0]] + text[c[0] : c[0] + c[1]] * 3 + text[c[0] :]
        ),
    )


YAML_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True),
    st.text(max_size=10),
    st.dates(),
)


def yaml_shaped(keys: list[str]) -> st.SearchStrategy[str]:
    """Documents of the right keys with values of any shape, dumped as YAML."""
    key = st.sampled_from(keys) | st.text(max_size=6)
    tree = st.recursive(
        YAML_SCALARS,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(key, inner, max_size=5),
        max_leaves=30,
    )
    return st.dictionaries(key, tree, max_size=8).map(
        lambda doc: yaml.safe_dump(doc, allow_unicode=True)
    )


def names_a_line(message: str, filename: str = "") -> bool:
    """`line 3: seat: ...` (CSV), or `ground.yaml:12: blocks[2].rows: ...` (YAML; a whole file's
    refusal, such as its size, names the file)."""
    if not filename:
        return bool(re.match(r"line \d+: .", message, re.DOTALL))
    return bool(re.match(rf"{re.escape(filename)}(:\d+)?: .", message, re.DOTALL))


# --- the ticket file ------------------------------------------------------------------------------

BLOCKS = {
    "S-L2": BlockInfo(id=1, rows=tuple("ABCDEFGHIJ"), seats_per_row=20, first_seat=1),
    "N-L1": BlockInfo(id=2, rows=("AA", "BB"), seats_per_row=5, first_seat=101),
}
TICKET_VALUES = ["AWAY-1", "AWAY-2", "S-L2", "N-L1", "A", "J", "1", "20", "21", "away",
                 "home", "1990-02-03", "03/02/1990", "31/02/1990", "Ellis Vantwick", "",
                 "x" * 70]  # fmt: skip


@SETTINGS
@given(
    data=st.one_of(
        csv_text(list(ALIASES), TICKET_VALUES).map(lambda text: text.encode()),
        st.binary(max_size=300),
        csv_text(list(ALIASES), TICKET_VALUES).map(lambda text: text.encode("utf-16")),
    )
)
def test_a_ticket_file_is_read_or_refused_line_by_line(data: bytes) -> None:
    try:
        rows = parse_tickets(data, blocks=BLOCKS, today=date(2024, 3, 9))
    except TicketFileError as refused:
        assert refused.errors and all(names_a_line(e) for e in refused.errors), refused.errors
    else:
        assert rows and len({row.barcode for row in rows}) == len(rows)


# --- the venue file -------------------------------------------------------------------------------

VENUE = factories.venue_text()
VENUE_KEYS = sorted({k for k in re.findall(r"^\s*-?\s*(\w+):", VENUE, re.M)})


@SETTINGS
@given(
    text=st.one_of(
        damaged(VENUE),
        yaml_shaped(VENUE_KEYS),
        st.text(max_size=300),
        st.sampled_from(
            [
                "a: &a [1, 2]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\nd: [*c, *c, *c]",
                "blocks: " + "[" * 500,
                "!!python/object:os.system {}",
            ]
        ),
    )
)
def test_a_venue_file_is_read_or_refused_line_by_line(text: str) -> None:
    try:
        venue_file_parse(text=text, filename="ground.yaml")
    except VenueFileError as refused:
        assert refused.errors and all(names_a_line(e, "ground.yaml") for e in refused.errors), (
            refused.errors
        )


# --- the season's fixtures ------------------------------------------------------------------------

SEASON_COLUMNS = ["opponent", "competition", "stage", "kickoff", "layout", "away_allocation",
                  "shared_with", "Kick Off"]  # fmt: skip
SEASON_VALUES = ["Harbour Town", factories.LEAGUE, "2030-08-10 15:00", "2030-02-30 15:00",
                 "10/08/2030 15:00", "league", "cup", "300", "-1", "99999999999999999999",
                 "riverside-constabulary", "nobody", "Final", ""]  # fmt: skip


def test_a_season_file_is_read_or_refused_line_by_line(db) -> None:
    season_ground = factories.ground(factories.cast().home)

    @SETTINGS
    @given(
        data=st.one_of(
            csv_text(SEASON_COLUMNS, SEASON_VALUES).map(lambda text: text.encode()),
            st.binary(max_size=300),
        )
    )
    def read(data: bytes) -> None:
        try:
            season_file_parse(ground=season_ground, data=data)
        except SeasonFileError as refused:
            assert refused.errors and all(names_a_line(e) for e in refused.errors), refused.errors

    read()


# --- the risk policy ------------------------------------------------------------------------------

POLICY = (Path(risk_policy.__file__).parent / "policy" / "default.yaml").read_text()
POLICY_KEYS = sorted({k for k in re.findall(r"^\s*-?\s*(\w+):", POLICY, re.M)})


@SETTINGS
@given(text=st.one_of(damaged(POLICY), yaml_shaped(POLICY_KEYS), st.text(max_size=300)))
def test_a_risk_policy_is_read_or_refused_line_by_line(text: str) -> None:
    try:
        risk_policy.policy_parse(text=text, filename="policy.yaml")
    except risk_policy.PolicyFileError as refused:
        assert refused.errors and all(names_a_line(e, "policy.yaml") for e in refused.errors), (
            refused.errors
        )


# --- a case bundle --------------------------------------------------------------------------------


def a_bundle() -> bytes:
    """A bundle as bundle_build writes one: members and a manifest of their SHA-256."""
    still = "evidence/00001-still.png"
    members = {"case.json": b'{"case": 1}', "log.json": b"[]", still: b"P" * 400}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, content in members.items():
            zf.writestr(name, content)
        manifest = {
            "files": {name: hashlib.sha256(data).hexdigest() for name, data in members.items()},
            "evidence": [
                {"file": still, "sha256_at_upload": hashlib.sha256(members[still]).hexdigest()}
            ],
        }  # fmt: skip
        zf.writestr(MANIFEST, json.dumps(manifest))
    return out.getvalue()


BUNDLE = a_bundle()


def with_extra_member(bundle: bytes, name: str, content: bytes) -> bytes:
    out = io.BytesIO(bundle)
    with zipfile.ZipFile(out, "a") as zf:
        zf.writestr(name or "extra", content)
    return out.getvalue()


DAMAGED_BUNDLES = st.one_of(
    st.binary(max_size=400),
    st.tuples(st.integers(0, len(BUNDLE) - 1), st.integers(1, 255)).map(
        lambda c: BUNDLE[: c[0]] + bytes([BUNDLE[c[0]] ^ c[1]]) + BUNDLE[c[0] + 1 :]
    ),
    st.integers(0, len(BUNDLE) - 1).map(lambda at: BUNDLE[:at]),
)


def test_a_valid_bundle_verifies(tmp_path: Path) -> None:
    path = tmp_path / "bundle.zip"
    path.write_bytes(BUNDLE)
    check = bundle_verify(path)
    assert check.ok and check.checked == 3


def test_a_damaged_bundle_is_refused_or_names_its_members(tmp_path: Path) -> None:
    path = tmp_path / "bundle.zip"

    @SETTINGS
    @given(data=DAMAGED_BUNDLES)
    def verify(data: bytes) -> None:
        path.write_bytes(data)
        try:
            check = bundle_verify(path)
        except BundleError as refused:
            assert refused.field == "file" and str(path) in refused.message
            return
        # Read as a bundle: a byte changed in a member's data is a mismatch naming it; one in
        # the ZIP's own bookkeeping (a time stamp) may leave every member intact.
        assert isinstance(check, BundleCheck)
        named = check.mismatched + check.missing + check.unlisted
        assert check.ok or all(isinstance(name, str) and name for name in named)

    verify()


def test_a_bundle_with_a_member_added_is_not_ok(tmp_path: Path) -> None:
    path = tmp_path / "bundle.zip"

    @SETTINGS
    @given(name=st.sampled_from(["extra.txt", "evidence/00002-x.png", "../up.txt"]),
           content=st.binary(max_size=50))  # fmt: skip
    def verify(name: str, content: bytes) -> None:
        path.write_bytes(with_extra_member(BUNDLE, name, content))
        check = bundle_verify(path)
        assert not check.ok and check.unlisted == [name]

    verify()


def test_every_refusal_here_is_the_projects_own_error() -> None:
    for error in (TicketFileError, VenueFileError, SeasonFileError, risk_policy.PolicyFileError):
        assert issubclass(error, FileRefused)


def test_a_bundle_whose_manifest_is_damaged_is_refused(tmp_path: Path) -> None:
    # Found by the property above: a changed byte in the manifest's data raised BadZipFile.
    info = zipfile.ZipFile(io.BytesIO(BUNDLE)).getinfo(MANIFEST)
    at = info.header_offset + 30 + len(info.filename) + len(info.extra) + 2  # into its data
    path = tmp_path / "bundle.zip"
    path.write_bytes(BUNDLE[:at] + bytes([BUNDLE[at] ^ 0xFF]) + BUNDLE[at + 1 :])
    with pytest.raises(BundleError, match=r"manifest\.json cannot be read"):
        bundle_verify(path)
