"""One formatter per kind (issue 27): a moment with its date, a day, a time of day, a count with
its thousands separated and a rate, on the ground's clock, as every page writes them; and one
natural order for anything numbered by name (blocks: Lower 1, 2 ... 10)."""

from datetime import date, datetime
from zoneinfo import ZoneInfo

from django.template import Context, Template

from safeground.venues.models import natural_key

UTC = ZoneInfo("UTC")


def render(source: str, **context: object) -> str:
    return Template(source).render(Context(context))


def test_each_kind_has_one_way_of_being_written() -> None:
    summer = datetime(2016, 10, 26, 20, 50, 7, tzinfo=UTC)  # 21:50 in London (BST)
    winter = datetime(2016, 12, 3, 17, 16, tzinfo=UTC)
    assert render("{{ m|local_time }}", m=summer) == "26/10/2016 21:50"
    assert render('{{ m|local_time:"seconds" }}', m=summer) == "26/10/2016 21:50:07"
    assert render("{{ m|local_time }}", m=winter) == "03/12/2016 17:16"
    assert render("{{ m|local_date }}", m=summer) == "26/10/2016"
    assert render("{{ d|local_date }}", d=date(1990, 2, 1)) == "01/02/1990"
    assert render("{{ m|hhmm }}", m=summer.isoformat()) == "21:50"
    assert render("{{ n|count }} {{ m|count }} {{ s|count }}", n=15900, m=51599, s=7) == (
        "15,900 51,599 7"
    )
    assert render("{{ r|rate }}", r=660) == "660 an hour"
    assert render("{{ r|rate }}", r=1320) == "1,320 an hour"
    assert render("[{{ m|local_time }}{{ n|count }}]", m=None, n=None) == "[]"


def test_blocks_sort_in_natural_order() -> None:
    codes = ["E-L10", "E-L2", "E-L1", "E-U1", "Lower 10", "Lower 2", "Lower 1"]
    assert sorted(codes, key=natural_key) == [
        "E-L1", "E-L2", "E-L10", "E-U1", "Lower 1", "Lower 2", "Lower 10",
    ]  # fmt: skip
