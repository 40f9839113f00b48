"""The season's charts (issue 27): every colour of the palette tells its category apart (two
shared a green), and arrests and ejections are shown apart, not among the incidents."""

import itertools

from safeground.reports import charts
from safeground.reports.season import SeasonFilter, season
from safeground.reports.views import _season_charts

from .conftest import Played

CLEARLY_APART = 25  # CIE76 delta E; about 2.3 is the smallest difference people notice


def _lab(colour: str) -> tuple[float, float, float]:
    """sRGB hex to CIE L*a*b* (D65)."""

    def linear(c: float) -> float:
        return ((c + 0.055) / 1.055) ** 2.4 if c > 0.04045 else c / 12.92

    r, g, b = (linear(int(colour[i : i + 2], 16) / 255) for i in (1, 3, 5))
    x = (r * 0.4124 + g * 0.3576 + b * 0.1805) / 0.95047
    y = r * 0.2126 + g * 0.7152 + b * 0.0722
    z = (r * 0.0193 + g * 0.1192 + b * 0.9505) / 1.08883

    def f(v: float) -> float:
        return v ** (1 / 3) if v > 0.008856 else 7.787 * v + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def _apart(a: str, b: str) -> float:
    return sum((p - q) ** 2 for p, q in zip(_lab(a), _lab(b), strict=True)) ** 0.5


def test_no_two_colours_of_the_palette_look_alike() -> None:
    close = [
        (a, b, round(_apart(a, b), 1))
        for a, b in itertools.combinations(charts.PALETTE, 2)
        if _apart(a, b) < CLEARLY_APART
    ]
    assert not close
    assert _apart("#009E73", "#11A579") < CLEARLY_APART  # the two greens the newcomer saw


def test_the_incidents_chart_gives_each_category_its_own_colour_and_no_arrests(
    played: Played,
) -> None:
    found = season(played.day.ground, SeasonFilter())
    chart = _season_charts(found)
    incidents = chart["incidents"]["series"]
    colours = [s["colour"] for s in incidents]
    assert len(set(colours)) == len(colours) <= len(charts.PALETTE)
    names = {s["name"] for s in incidents}
    assert names and not names & {"Arrest", "Ejection"}
    outcomes = {s["name"]: sum(s["values"]) for s in chart["outcomes"]["series"]}
    arrests = sum(1 for e in played.reports if e.category.code == "arrest")
    assert outcomes["Arrests"] == found.totals["arrests"] == arrests > 0
