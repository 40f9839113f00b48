"""The Welsh catalogue is complete for the pages a steward and a turnstile steward use, and for
every public page: each string those pages' templates and their Python words mark has a Welsh
translation, none fuzzy, none empty. (`make lint` checks the catalogue is not stale and that
each translation keeps its msgid's slots.)"""

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from django.utils.translation.template import templatize

from safeground.incidents.models import Broadcast
from safeground.incidents.steward_words import SCRIPT_NAMES

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "safeground"
WELSH = PACKAGE / "locale" / "cy" / "LC_MESSAGES" / "django.po"

# The steward's phone page and the panels and banners it loads, the scanner page, their service
# workers, the supporters' public seat and status pages, the log-in and account pages, the error
# pages and the frame every page shares.
TEMPLATES = [
    "templates/base.html",
    "templates/language_switch.html",
    "templates/403.html",
    "templates/404.html",
    "templates/500.html",
    "templates/offline_sw.js",
    "accounts/templates/accounts/login.html",
    "accounts/templates/accounts/locked_out.html",
    "accounts/templates/accounts/second_factor.html",
    "accounts/templates/accounts/devices.html",
    "accounts/templates/accounts/device_revoke.html",
    "incidents/templates/incidents/steward.html",
    "incidents/templates/incidents/steward_sw.js",
    "incidents/templates/incidents/banners.html",
    "deployment/templates/deployment/steward_panel.html",
    "alerts/templates/alerts/phone_panel.html",
    "decisions/templates/decisions/steward_banner.html",
    "supporters/templates/supporters/public_base.html",
    "supporters/templates/supporters/seat.html",
    "supporters/templates/supporters/status.html",
    "entry/templates/entry/scanner.html",
    "entry/templates/entry/scanner_sw.js",
]
# The words those pages say from Python: their scripts' words, the turnstile's reasons, the
# seeded categories' names, the checks' states, the log-in's messages; the alerts pushed to a
# steward's phone; the supporters' report categories, statuses and refusals, and the texts
# their text line sends back; the refusals a steward's report, check or scan may meet.
PYTHON = [
    "incidents/steward_words.py",
    "incidents/categories.py",
    "entry/scanner_words.py",
    "entry/rules.py",
    "deployment/selectors.py",
    "alerts/services.py",
    "supporters/views.py",
    "supporters/services.py",
    "supporters/sms.py",
    "supporters/categories.py",
    "supporters/selectors.py",
    "supporters/seats.py",
    "supporters/abuse.py",
    "supporters/photos.py",
    "errors.py",
    "incidents/services.py",
    "incidents/photos.py",
    "incidents/posts.py",
    "deployment/services.py",
    "entry/scans.py",
    "entry/runtime/asgi.py",
    "entry/api.py",
    "entry/bundle.py",
    "api.py",
    "accounts/devices.py",
    "accounts/views.py",
    "urls.py",
]
KEYWORDS = ["gettext_noop", "gettext_lazy", "pgettext:1c,2", "pgettext_lazy:1c,2"]

needs_gettext = pytest.mark.skipif(
    shutil.which("xgettext") is None, reason="needs gettext (make gettext installs it)"
)


def pages_catalogue(folder: Path) -> Path:
    """The strings the pages mark, as xgettext finds them (templates as makemessages reads them)."""
    sources = []
    for name in TEMPLATES:
        path = PACKAGE / name
        read = folder / f"{name.replace('/', '_')}.py"
        read.write_text(templatize(path.read_text(), origin=str(path)))
        sources.append(str(read))
    sources += [str(PACKAGE / name) for name in PYTHON]
    pot = folder / "pages.pot"
    keywords = [f"--keyword={keyword}" for keyword in KEYWORDS]
    command = ["xgettext", "--language=Python", "--from-code=UTF-8", *keywords, "-o", str(pot)]
    subprocess.run([*command, *sources], check=True)
    return pot


@needs_gettext
def test_the_welsh_catalogue_translates_every_string_of_the_steward_and_scanner_pages(
    tmp_path: Path,
) -> None:
    pot = pages_catalogue(tmp_path)
    assert pot.read_text().count("msgid ") > 200  # the pages' strings were found
    # msgcmp: each msgid of the pages must have a translation; fuzzy and empty ones do not count.
    compared = subprocess.run(["msgcmp", str(WELSH), str(pot)], capture_output=True, text=True)
    assert compared.returncode == 0, compared.stderr


@needs_gettext
def test_the_checker_catches_a_missing_or_fuzzy_translation(tmp_path: Path) -> None:
    pot = pages_catalogue(tmp_path)
    text = WELSH.read_text()
    for changed in (
        text.replace('msgstr "Anfon adroddiad"', 'msgstr ""'),
        text.replace('msgid "Send report"', '#, fuzzy\nmsgid "Send report"'),
    ):
        assert changed != text
        broken = tmp_path / "cy.po"
        broken.write_text(changed)
        compared = subprocess.run(["msgcmp", str(broken), str(pot)], capture_output=True)
        assert compared.returncode != 0


def test_no_welsh_translation_is_fuzzy() -> None:
    """A fuzzy entry is left out of the compiled catalogue: the page would show English."""
    entries = WELSH.read_text().split("\n\n")[1:]  # after the header
    assert [entry for entry in entries if re.search(r"^#,.*\bfuzzy\b", entry, re.M)] == []


def test_the_broadcast_scripts_named_for_the_catalogue_are_the_models() -> None:
    assert set(SCRIPT_NAMES) == set(Broadcast.Script.labels)
