"""The seeded categories (editable later in the admin), each with the offence it may point to."""

from django.utils.translation import gettext_noop

# (code, name, offence it may point to, default severity). The names are in the catalogue: a
# page shows a seeded name in the reader's language (`{% translate category.name %}`), any other
# as it is.
SEED = [
    ("missile", gettext_noop("Missile thrown"), "Football (Offences) Act 1991 s.2", 3),
    ("pitch-incursion", gettext_noop("Pitch incursion"), "Football (Offences) Act 1991 s.4", 3),
    ("segregation-breach", gettext_noop("Segregation breach"), "Public Order Act 1986 s.4A/s.5", 4),
    ("disorder", gettext_noop("Fighting / disorder"), "Public Order Act 1986 s.3/s.4", 4),
    ("crowd-surge", gettext_noop("Crowd surge / crush"), "", 5),
    (
        "pyrotechnic",
        gettext_noop("Pyrotechnic"),
        "Sporting Events (Control of Alcohol etc.) Act 1985 s.2A",
        3,
    ),
    (
        "chanting-racist",
        gettext_noop("Discriminatory chanting or abuse — racist"),
        "Football (Offences) Act 1991 s.3",
        3,
    ),
    (
        "chanting-homophobic",
        gettext_noop("Discriminatory chanting or abuse — homophobic"),
        "Public Order Act 1986 s.4A/s.5",
        3,
    ),
    (
        "chanting-other",
        gettext_noop("Discriminatory chanting or abuse — other"),
        "Public Order Act 1986 s.5",
        2,
    ),
    (
        "offensive-material",
        gettext_noop("Offensive material (leaflets, banners)"),
        "Public Order Act 1986 s.5",
        2,
    ),
    ("alcohol", gettext_noop("Alcohol"), "Sporting Events (Control of Alcohol etc.) Act 1985", 2),
    ("damage", gettext_noop("Damage"), "Criminal Damage Act 1971 s.1", 2),
    ("medical", gettext_noop("Medical"), "", 3),
    ("ejection", gettext_noop("Ejection"), "", 2),
    ("arrest", gettext_noop("Arrest"), "", 3),
    ("lost-child", gettext_noop("Lost child"), "", 4),
    ("safety-defect", gettext_noop("Safety defect"), "", 3),
    ("decision", gettext_noop("Decision (with rationale)"), "", 1),
    ("other", gettext_noop("Other"), "", 1),
]
