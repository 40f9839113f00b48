"""The default checklist's items (checklists/default.yaml) for the translation catalogues: a
YAML file is not read by makemessages, so its names are listed here, and a steward reading in
Welsh sees them in Welsh (a ground's own list shows as written). tests/deployment holds this
list to the file."""

from django.utils.translation import gettext_noop

DEFAULT_ITEM_NAMES = (
    gettext_noop("Turnstiles and scanners working"),
    gettext_noop("Exit gates unlocked, clear and staffed"),
    gettext_noop("Gangways and vomitories clear"),
    gettext_noop("Crush barriers and rails sound"),
    gettext_noop("Extinguishers and hose reels in place, in date"),
    gettext_noop("PA heard clearly"),
    gettext_noop("CCTV cameras see the area (ask the control room)"),
)
