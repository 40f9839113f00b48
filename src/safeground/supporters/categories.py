"""What a supporter can report, in the words clubs use, and the log category each becomes.

Discriminatory abuse comes in its kinds, as Kick It Out counts them; each kind is a category of
its own so a stand's racist abuse and its homophobic abuse are two items in the queue. The text
line's keywords (sms.py) name the same codes.
"""

from dataclasses import dataclass

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _


@dataclass(frozen=True)
class SupporterCategory:
    code: str
    label: Promise
    log_category: str  # the control-room log's category (incidents/categories.py)
    abuse: bool = False  # a kind of discriminatory abuse: shown together on the seat page


CATEGORIES: tuple[SupporterCategory, ...] = (
    SupporterCategory("abuse-racist", _("Racist abuse"), "chanting-racist", abuse=True),
    SupporterCategory(
        "abuse-homophobic", _("Homophobic or transphobic abuse"), "chanting-homophobic", abuse=True
    ),
    SupporterCategory("abuse-antisemitic", _("Antisemitic abuse"), "chanting-other", abuse=True),
    SupporterCategory("abuse-religious", _("Abuse of a faith"), "chanting-other", abuse=True),
    SupporterCategory("abuse-sexist", _("Sexist abuse"), "chanting-other", abuse=True),
    SupporterCategory("abuse-disability", _("Disability abuse"), "chanting-other", abuse=True),
    SupporterCategory("abuse-other", _("Other discriminatory abuse"), "chanting-other", abuse=True),
    SupporterCategory("violence", _("Violence or a threat"), "disorder"),
    SupporterCategory("missile", _("Something thrown"), "missile"),
    SupporterCategory("pyrotechnics", _("Flares, smoke bombs or fireworks"), "pyrotechnic"),
    SupporterCategory("medical", _("Someone needs medical help"), "medical"),
    SupporterCategory("crowding", _("Crowding or a crush"), "crowd-surge"),
    SupporterCategory("drunk", _("Drunk and disorderly"), "alcohol"),
    SupporterCategory("smoking", _("Smoking"), "other"),
    SupporterCategory("standing", _("Persistent standing"), "other"),
    SupporterCategory("other", _("Something else"), "other"),
)
BY_CODE = {c.code: c for c in CATEGORIES}
CATEGORY_CHOICES = [(c.code, c.label) for c in CATEGORIES]
