"""What a supporter can report, in the words clubs use, and the log category each becomes.

Discriminatory abuse comes in its kinds, as Kick It Out counts them; each kind is a category of
its own so a stand's racist abuse and its homophobic abuse are two items in the queue. The text
line's keywords (sms.py) name the same codes.

Each category has a severity, one table for the queue's order and the text line's reading (the
most severe category a text names wins): a life at risk first (medical help, a crush), then harm
done by someone (violence, something thrown, pyrotechnics, discriminatory abuse), then the rest.
"""

from dataclasses import dataclass

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _


@dataclass(frozen=True)
class SupporterCategory:
    code: str
    label: Promise
    log_category: str  # the control-room log's category (incidents/categories.py)
    severity: int  # 1 most severe (LIFE), then HARM, then CONDUCT
    abuse: bool = False  # a kind of discriminatory abuse: shown together on the seat page


LIFE, HARM, CONDUCT = 1, 2, 3


CATEGORIES: tuple[SupporterCategory, ...] = (
    SupporterCategory("abuse-racist", _("Racist abuse"), "chanting-racist", HARM, abuse=True),
    SupporterCategory(
        "abuse-homophobic",
        _("Homophobic or transphobic abuse"),
        "chanting-homophobic",
        HARM,
        abuse=True,
    ),
    SupporterCategory(
        "abuse-antisemitic", _("Antisemitic abuse"), "chanting-other", HARM, abuse=True
    ),
    SupporterCategory("abuse-religious", _("Abuse of a faith"), "chanting-other", HARM, abuse=True),
    SupporterCategory("abuse-sexist", _("Sexist abuse"), "chanting-other", HARM, abuse=True),
    SupporterCategory(
        "abuse-disability", _("Disability abuse"), "chanting-other", HARM, abuse=True
    ),
    SupporterCategory(
        "abuse-other", _("Other discriminatory abuse"), "chanting-other", HARM, abuse=True
    ),
    SupporterCategory("violence", _("Violence or a threat"), "disorder", HARM),
    SupporterCategory("missile", _("Something thrown"), "missile", HARM),
    SupporterCategory("pyrotechnics", _("Flares, smoke bombs or fireworks"), "pyrotechnic", HARM),
    SupporterCategory("medical", _("Someone needs medical help"), "medical", LIFE),
    SupporterCategory("crowding", _("Crowding or a crush"), "crowd-surge", LIFE),
    SupporterCategory("drunk", _("Drunk and disorderly"), "alcohol", CONDUCT),
    SupporterCategory("smoking", _("Smoking"), "other", CONDUCT),
    SupporterCategory("standing", _("Persistent standing"), "other", CONDUCT),
    SupporterCategory("other", _("Something else"), "other", CONDUCT),
)
BY_CODE = {c.code: c for c in CATEGORIES}
CATEGORY_CHOICES = [(c.code, c.label) for c in CATEGORIES]


def severity(code: str) -> int:
    """The category's severity (LIFE, HARM or CONDUCT); an unknown code counts as CONDUCT."""
    category = BY_CODE.get(code)
    return category.severity if category else CONDUCT
