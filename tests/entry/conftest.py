from tests.bans.conftest import club, cup, register  # noqa: F401  (the same light demo)
