"""The reason table (entry/rules.py) and its four readers agree: the decision's SQL statement, its
ORM path, the offline bundle's ticket states, and the scanner page (its config and the checks its
script makes offline). Each checker takes the table as an argument; each is shown to report a
table that disagrees with what the code does (the `*_catches_*` tests)."""

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client
from django.utils import translation
from django.utils.translation import gettext

from safeground.entry import bundle, decision, rules
from safeground.entry.models import Scan, TicketFlag
from safeground.entry.rules import REASONS, Reason

from .conftest import flag, make_ticket

SCRIPT = Path(rules.__file__).parents[1] / "static" / "safeground" / "scanner-1.js"

type Table = tuple[Reason, ...]


def swapped(table: Table, first: str, second: str) -> Table:
    """The table with two reasons' places exchanged."""
    codes = [reason.code for reason in table]
    i, j = codes.index(first), codes.index(second)
    changed = list(table)
    changed[i], changed[j] = changed[j], changed[i]
    return tuple(changed)


def reworded(table: Table, code: str, message: str) -> Table:
    return tuple(replace(r, message=message) if r.code == code else r for r in table)


# --- the checkers ---------------------------------------------------------------------------------


def sql_disagreements(table: Table, sql: str) -> list[str]:
    """The reasons the statement decides, in the order it decides them (each `THEN`/`ELSE` of a
    reason code; one reason may take several WHENs), against the table's."""
    known = set(Scan.Reason.values)  # what a scan may store, whatever the table says
    found: list[str] = []
    for code in re.findall(r"(?:THEN|ELSE) '([a-z_]+)'", sql):
        if code in known and (not found or found[-1] != code):
            found.append(code)
    wanted = [reason.code for reason in table]
    return [] if found == wanted else [f"SQL decides {found}, the table says {wanted}"]


def orm_disagreements(table: Table, no_ticket: list[str], ticket: list[str]) -> list[str]:
    """The ORM path's checks (the keys of decision.no_ticket_holds and ticket_holds, which
    rules.first reads in the table's order) and its admission reason, stage by stage."""
    problems = []
    for stage, checked in (("no_ticket", no_ticket), ("ticket", ticket)):
        wanted = list(rules.codes(stage, table))
        if checked != wanted:
            problems.append(f"the ORM checks {checked} without or on the ticket; table: {wanted}")
    if list(rules.codes("admission", table)) != [decision.ADMISSION]:
        problems.append(f"the ORM's admission reason is {decision.ADMISSION}")
    return problems


def bundle_disagreements(table: Table, states: dict[tuple[str, str | None], str]) -> list[str]:
    """Each (own state, flag) the bundle can hold shows the first of the table's bundle reasons
    that holds, else the ticket's own state."""
    carried = rules.bundle_states(table)
    problems = []
    for (own, flag_state), shown in states.items():
        holds = {own, flag_state}
        wanted = next((code for code in carried if code in holds), own)
        if shown != wanted:
            problems.append(f"bundle: own {own}, flag {flag_state} -> {shown}; table: {wanted}")
    return problems


# What fills a message's slots and the place an admission names, by the page config's key.
SLOT_WORDS: dict[str, object] = {
    "end": rules.END_WORDS,
    "go": rules.GO,
    "gatesJoinedBy": rules.GATES_JOINED_BY,
    "whereThisScanner": rules.WHERE_THIS_SCANNER,
    "whereBeforeBundle": rules.WHERE_BEFORE_BUNDLE,
    "seat": rules.SEAT,
}


def slot_word_pieces() -> set[str]:
    """The fixed text of each of those words (between their own slots: "block ", ", row ")."""
    texts = [*rules.END_WORDS.values()] + [w for w in SLOT_WORDS.values() if isinstance(w, str)]
    return {piece for text in texts for piece in re.split(r"\{\w+\}", text) if piece.strip()}


def said(words: object) -> object:
    """The table's words in the active language (its catalogue's translation)."""
    if isinstance(words, dict):
        return {key: gettext(text) for key, text in words.items()}
    return gettext(str(words))


def page_disagreements(table: Table, config: dict) -> list[str]:
    """The page's config carries the reasons a scanner decides offline, in order, in the table's
    words (in the active language), the admit and exit messages, the words that fill the
    messages' slots, and each reason's name."""
    wanted = [{"code": r.code, "message": gettext(r.message)} for r in table if r.offline]
    problems = [] if config["reasons"] == wanted else ["the page's reasons are not the table's"]
    if config.get("labels") != {r.code: gettext(r.label) for r in table}:
        problems.append("the page's reason names are not the table's")
    for key, text in (
        ("admit", rules.ADMIT),
        ("exitReentry", rules.EXIT_REENTRY),
        ("exitNoReentry", rules.EXIT_NO_REENTRY),
    ):
        if config.get(key) != gettext(text):
            problems.append(f"the page's {key} message is not the table's")
    for key, words in SLOT_WORDS.items():
        if config.get(key) != said(words):
            problems.append(f"the page's {key} words are not entry/rules.py's")
    return problems


def script_disagreements(table: Table, script: str) -> list[str]:
    """The script's hand-written offline checks: one per reason a scanner decides offline, in the
    table's order, and no steward message of its own (every one comes from the config)."""
    block = re.search(r"const OFFLINE_CHECKS = \{(.*?)\n  \};", script, re.S)
    if block is None:
        return ["scanner-1.js has no OFFLINE_CHECKS"]
    checked = re.findall(r"^\s{4}([a-z_]+):", block.group(1), re.M)
    wanted = [r.code for r in table if r.offline]
    problems = [] if checked == wanted else [f"scanner-1.js checks {checked}; table: {wanted}"]
    for reason in table:
        words = rules.SLOT.split(reason.message)[0][:40]
        if words and words in script:
            problems.append(f"scanner-1.js holds its own words for {reason.code}")
    if "Do not admit" in script or "Exit recorded" in script:
        problems.append("scanner-1.js holds a steward message of its own")
    # The words around a message: none written out (a short one, " or ", as a string literal).
    for piece in slot_word_pieces():
        quoted = (f"{mark}{piece}{mark}" for mark in "\"'`")
        if (len(piece.strip()) >= 4 and piece in script) or any(q in script for q in quoted):
            problems.append(f"scanner-1.js holds its own words {piece!r} (entry/rules.py's)")
    return problems


def scanner_config(language: str = "en-gb") -> dict:
    page = Client(headers={"accept-language": language}).get("/entry/scanner/")
    found = re.search(
        r'<script id="scanner-config" type="application/json">(.*?)</script>',
        page.content.decode(),
        re.S,
    )
    assert found is not None
    return json.loads(found.group(1))["rules"]


def orm_checks() -> tuple[list[str], list[str]]:
    ctx = decision.ScanContext(
        device_id=0, turnstile_id=0, gate_id=0, fixture_id=None, day=None, home_ok=True,
        away_ok=True, reentry=False, direction="in", barcode="X", nonce=None,  # type: ignore[arg-type]
        scanned_at=None, stored_at=None,  # type: ignore[arg-type]
    )  # fmt: skip
    return (
        list(decision.no_ticket_holds(other_match=False, fits=False)),
        list(decision.ticket_holds(ctx, status="valid", end="home", level=0)),
    )


# --- the code agrees with the table ---------------------------------------------------------------


def test_the_table_names_every_reason_a_scan_may_store_once() -> None:
    codes = [reason.code for reason in REASONS]
    assert len(codes) == len(set(codes))
    assert set(codes) == set(Scan.Reason.values)


def test_a_scans_reasons_are_the_tables_codes_and_words_in_its_order() -> None:
    # Reports, exports and forms name a reason by these choices: the table's words, no others.
    assert Scan.Reason.choices == [(reason.code, reason.label) for reason in REASONS]


def test_the_statement_decides_in_the_table_order() -> None:
    assert sql_disagreements(REASONS, decision.DECIDE_SQL) == []


def test_the_orm_path_checks_the_table_reasons() -> None:
    assert orm_disagreements(REASONS, *orm_checks()) == []


def test_the_bundle_states_follow_the_table() -> None:
    assert bundle_disagreements(REASONS, bundle.STATES) == []


@pytest.mark.django_db
def test_the_scanner_page_gets_the_table() -> None:
    assert page_disagreements(REASONS, scanner_config()) == []


def test_the_scanner_script_checks_the_table_reasons_offline() -> None:
    assert script_disagreements(REASONS, SCRIPT.read_text()) == []


# --- each checker catches a table that disagrees --------------------------------------------------


def test_the_sql_checker_catches_another_order() -> None:
    assert sql_disagreements(swapped(REASONS, "cancelled", "flagged"), decision.DECIDE_SQL)
    assert sql_disagreements(REASONS[:-1], decision.DECIDE_SQL)  # a reason the table lacks


def test_the_orm_checker_catches_another_order_or_a_missing_check() -> None:
    no_ticket, ticket = orm_checks()
    assert orm_disagreements(swapped(REASONS, "banned", "cancelled"), no_ticket, ticket)
    assert orm_disagreements(REASONS, no_ticket, ticket[:-1])


def test_the_bundle_checker_catches_another_order() -> None:
    assert bundle_disagreements(swapped(REASONS, "banned", "cancelled"), bundle.STATES)
    assert bundle_disagreements(swapped(REASONS, "cancelled", "flagged"), bundle.STATES)


@pytest.mark.django_db
def test_a_welsh_scanner_page_gets_the_table_in_welsh() -> None:
    """A steward whose browser asks for Welsh gets the table's words from the Welsh catalogue,
    every one translated (none left in English), with the same slots."""
    config = scanner_config("cy")
    with translation.override("cy"):
        assert page_disagreements(REASONS, config) == []
    english = scanner_config()
    for reason, welsh in zip(english["reasons"], config["reasons"], strict=True):
        assert welsh["message"] != reason["message"], reason["code"]
        assert rules.SLOT.findall(welsh["message"]) == rules.SLOT.findall(reason["message"])
    assert config["labels"]["banned"] == "Wedi'i wahardd"
    assert config["seat"] == "bloc {block}, rhes {row}, sedd {seat}"


@pytest.mark.django_db
def test_the_page_checker_catches_other_words_or_order() -> None:
    config = scanner_config()
    assert page_disagreements(reworded(REASONS, "banned", "Do not admit."), config)
    assert page_disagreements(swapped(REASONS, "wrong_end", "already_inside"), config)


@pytest.mark.django_db
def test_the_page_checker_catches_other_words_around_a_message() -> None:
    config = scanner_config()
    assert page_disagreements(REASONS, {**config, "go": " Send the holder to {gates}."})
    assert page_disagreements(REASONS, {**config, "end": {"home": "a home", "away": "a visiting"}})
    assert page_disagreements(REASONS, {**config, "seat": "{block} {row} {seat}"})
    without = dict(config)
    del without["whereThisScanner"]
    assert page_disagreements(REASONS, without)


def test_the_script_checker_catches_another_order_or_its_own_words() -> None:
    script = SCRIPT.read_text()
    assert script_disagreements(swapped(REASONS, "wrong_end", "already_inside"), script)
    assert script_disagreements(REASONS, script.replace("flagged: (row)", "flaged: (row)"))
    own_words = script + '\nconst SAY_BANNED = "Do not admit: the holder is banned";'
    assert script_disagreements(REASONS, own_words)


@pytest.mark.parametrize(
    "own",
    [
        'const END = row[1] === "a" ? "an away" : "a home";',
        "const GO = ` Direct the holder to ${gates}.`;",
        'const GATES = gates.join(" or ");',
        "const PLACE = `block ${block}, row ${row}, seat ${seat}`;",
        'const WHERE = " by this scanner";',
        'const WHERE = " before the ticket list was made";',
    ],
)
def test_the_script_checker_catches_its_own_words_around_a_message(own: str) -> None:
    assert script_disagreements(REASONS, SCRIPT.read_text() + "\n" + own)


# --- and so does what the decision does -----------------------------------------------------------


@pytest.fixture(params=["sql", "orm"])
def engine(request, monkeypatch):
    if request.param == "sql" and connection.vendor != "postgresql":
        pytest.skip("the one-statement path is PostgreSQL's; SQLite runs the ORM path")
    monkeypatch.setattr(decision, "USE_SQL", request.param == "sql")
    return request.param


@pytest.mark.django_db
def test_a_ticket_with_several_reasons_is_refused_for_the_first_in_the_table(gates, engine):
    """Home tickets at the away gate (wrong_end), some cancelled, some flagged: each refused for
    the first of its reasons in the table's order, on both paths."""
    tickets = {
        "LADDER-1": ("cancelled", TicketFlag.Status.CONFIRMED),
        "LADDER-2": ("cancelled", TicketFlag.Status.OPEN),
        "LADDER-3": ("valid", TicketFlag.Status.OPEN),
        "LADDER-4": ("valid", None),
    }
    for barcode, (status, flag_status) in tickets.items():
        ticket = make_ticket(gates.fixture, barcode, "N-L1", "home", status=status)
        if flag_status:
            flag(ticket, flag_status)
    for barcode, (status, flag_status) in tickets.items():
        holds = {
            "banned": flag_status == TicketFlag.Status.CONFIRMED,
            "cancelled": status == "cancelled",
            "flagged": flag_status == TicketFlag.Status.OPEN,
            "wrong_end": True,
        }
        body = gates.scan(barcode, "F03").json()
        reason = rules.first(holds)
        assert body["reason"] == reason, barcode
        assert body["message"].startswith(rules.SLOT.split(rules.BY_CODE[reason].message)[0])
