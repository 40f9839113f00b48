"""The seeded categories (editable later in the admin), each with the offence it may point to."""

# (code, name, offence it may point to, default severity)
SEED = [
    ("missile", "Missile thrown", "Football (Offences) Act 1991 s.2", 3),
    ("pitch-incursion", "Pitch incursion", "Football (Offences) Act 1991 s.4", 3),
    ("segregation-breach", "Segregation breach", "Public Order Act 1986 s.4A/s.5", 4),
    ("disorder", "Fighting / disorder", "Public Order Act 1986 s.3/s.4", 4),
    ("crowd-surge", "Crowd surge / crush", "", 5),
    ("pyrotechnic", "Pyrotechnic", "Sporting Events (Control of Alcohol etc.) Act 1985 s.2A", 3),
    (
        "chanting-racist",
        "Discriminatory chanting or abuse — racist",
        "Football (Offences) Act 1991 s.3",
        3,
    ),
    (
        "chanting-homophobic",
        "Discriminatory chanting or abuse — homophobic",
        "Public Order Act 1986 s.4A/s.5",
        3,
    ),
    ("chanting-other", "Discriminatory chanting or abuse — other", "Public Order Act 1986 s.5", 2),
    (
        "offensive-material",
        "Offensive material (leaflets, banners)",
        "Public Order Act 1986 s.5",
        2,
    ),
    ("alcohol", "Alcohol", "Sporting Events (Control of Alcohol etc.) Act 1985", 2),
    ("damage", "Damage", "Criminal Damage Act 1971 s.1", 2),
    ("medical", "Medical", "", 3),
    ("ejection", "Ejection", "", 2),
    ("arrest", "Arrest", "", 3),
    ("lost-child", "Lost child", "", 4),
    ("safety-defect", "Safety defect", "", 3),
    ("decision", "Decision (with rationale)", "", 1),
    ("other", "Other", "", 1),
]
