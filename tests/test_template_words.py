"""No template says a word outside Django's translation machinery.

Each template under src/ is read with Django's own template lexer: the text between the tags is
what a reader sees (once the HTML's tags are taken out), and so are a few attributes (a tooltip, a
screen reader's label, a placeholder, an image's alternative, a button's value). Any letter there
that is not inside {% translate %} or {% blocktranslate %} is a word a Welsh reader would get in
English, and fails this test, naming the template, the line and the words.
"""

import re
from html.parser import HTMLParser
from pathlib import Path

from django.template.base import Lexer, TokenType

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "safeground"

# Words that are the same in every language, each with the reason.
ALLOWED = {
    "Safeground",  # the product's name
    "Cymraeg",  # the language switch names each language in its own words
    "English",
    "v",  # a fixture is "Home v Away" in English and in Welsh alike
    "CSV",  # the names of file formats
    "JSON",
    "PDF",
}
# Attributes a person reads or hears (a screen reader speaks aria-label and alt).
READ_ATTRIBUTES = {"title", "aria-label", "placeholder", "alt"}
# The contents of these elements are not words: scripts, styling, and code (a command, a hash, a
# file's column name), the same in every language.
UNREAD_ELEMENTS = {"script", "style", "code"}
# A template tag, variable or comment stands in the skeleton as this mark: it is not a word.
MARK = "\x00"
LETTER = re.compile(r"[^\W\d_]")


def skeleton(source: str) -> list[tuple[str, int]]:
    """The template's literal text as (text, line) pieces, each tag, variable and translated
    string replaced by a MARK, and the insides of {% blocktranslate %} and {% comment %} left out.
    """
    pieces: list[tuple[str, int]] = []
    inside: str | None = None  # the closing tag we are waiting for
    for token in Lexer(source).tokenize():
        words = token.contents.split()
        if inside:
            if token.token_type == TokenType.BLOCK and words and words[0] == inside:
                inside = None
            continue
        if token.token_type == TokenType.TEXT:
            pieces.append((token.contents, token.lineno))
            continue
        if token.token_type == TokenType.BLOCK and words:
            if words[0] in ("blocktranslate", "blocktrans"):
                inside = "end" + words[0]
            elif words[0] == "comment":
                inside = "endcomment"
        pieces.append((MARK, token.lineno))
    return pieces


class Reader(HTMLParser):
    """Collects the words a reader would see in a template's skeleton."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.unread = 0
        self.found: list[tuple[int, str]] = []
        self.line_of: list[int] = []  # the template's line for each line of the skeleton

    def words(self, text: str) -> None:
        bare = " ".join(text.replace(MARK, " ").split())
        rest = " ".join(word for word in bare.split() if word.strip(".,:;()") not in ALLOWED)
        if LETTER.search(rest):
            line, _ = self.getpos()
            line += text[: text.find(bare.split()[0])].count("\n")  # the words' own line
            self.found.append((self.line_of[min(line, len(self.line_of)) - 1], bare))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in UNREAD_ELEMENTS:
            self.unread += 1
        self.handle_startendtag(tag, attrs)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """The attributes a person reads or hears, and a button's words (`<input value>`)."""
        values = dict(attrs)
        for name, value in attrs:
            if value and name in READ_ATTRIBUTES:
                self.words(value)
        if tag == "input" and values.get("type") in ("submit", "button") and values.get("value"):
            self.words(values["value"] or "")

    def handle_endtag(self, tag: str) -> None:
        if tag in UNREAD_ELEMENTS:
            self.unread = max(0, self.unread - 1)

    def handle_data(self, data: str) -> None:
        if not self.unread:
            self.words(data)


def untranslated(source: str) -> list[tuple[int, str]]:
    """(line, words) for each piece of literal text a reader sees outside the translation tags."""
    reader = Reader()
    text = ""
    for piece, line in skeleton(source):
        reader.line_of += [line + n for n in range(piece.count("\n"))]
        text += piece
    reader.line_of.append(reader.line_of[-1] + 1 if reader.line_of else 1)
    reader.feed(text)
    reader.close()
    return reader.found


def templates() -> list[Path]:
    return sorted(path for path in PACKAGE.rglob("templates/**/*.html"))


def test_every_word_of_every_template_goes_through_the_translation_machinery() -> None:
    assert len(templates()) > 70
    found = [
        f"{path.relative_to(PACKAGE)}:{line}: {words!r}"
        for path in templates()
        for line, words in untranslated(path.read_text())
    ]
    assert found == [], "words outside {% translate %}:\n" + "\n".join(found)


def test_the_guard_sees_text_and_read_attributes_but_not_code_or_translated_words() -> None:
    assert untranslated("<p>Crowd surge</p>") == [(1, "Crowd surge")]
    assert untranslated("<p>\n{{ n }} arrests</p>") == [(2, "arrests")]
    assert untranslated('<button aria-label="Close">×</button>') == [(1, "Close")]
    assert untranslated('<img alt="Ground plan" src="a.png">') == [(1, "Ground plan")]
    assert untranslated('<input type="submit" value="Save">') == [(1, "Save")]
    assert untranslated('<input placeholder="{% translate "Search" %}">') == []
    assert untranslated("{% load i18n %}<p>{% translate 'Crowd surge' %}</p>") == []
    assert untranslated("<p>{% blocktranslate %}{{ n }} arrests{% endblocktranslate %}</p>") == []
    assert untranslated('<div class="panel wide" data-role="log">{{ x }} · 3</div>') == []
    assert untranslated("<script>const a = 'word';</script><style>p { color: red }</style>") == []
    assert untranslated("{% comment %}Old words{% endcomment %}{# note #}") == []
    assert untranslated("<title>Safeground</title><p>{{ a }} v {{ b }}: <code>seq</code></p>") == []
