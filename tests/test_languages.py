"""Names kept in the ground's data files, shown in the reader's language (safeground/languages.py):
the Welsh where the file gives it and the reader chose Welsh, the English otherwise."""

from django.utils.translation import get_language, override

from safeground.languages import in_every_language, in_language, other_languages

EAST = {"cy": "Eisteddle'r Dwyrain"}


def test_the_welsh_name_is_shown_to_a_welsh_reader_and_the_english_to_anyone_else() -> None:
    with override("cy"):
        assert in_language("East Stand", EAST) == "Eisteddle'r Dwyrain"
    with override("en-gb"):
        assert in_language("East Stand", EAST) == "East Stand"


def test_the_english_name_stands_in_where_the_file_gives_no_welsh() -> None:
    with override("cy"):
        assert in_language("Gate A", {}) == "Gate A"
        assert in_language("Gate A", None) == "Gate A"


def test_a_live_frame_carries_english_and_only_the_languages_that_differ() -> None:
    def render() -> str:
        return in_language("East Stand", EAST) + (" (cy)" if get_language() == "cy" else "")

    with override("cy"):  # whoever's request publishes it, the frame is the same
        assert in_every_language(render) == ("East Stand", {"cy": "Eisteddle'r Dwyrain (cy)"})
    assert in_every_language(lambda: "Block S-L2") == ("Block S-L2", {})


def test_the_files_may_name_places_in_the_sites_other_languages() -> None:
    assert other_languages() == ("cy",)
