"""The laptop demo that `make run` serves: debug pages, demo data, second factor off."""

from .base import *  # noqa: F403
from .base import env

DEBUG = env.bool("DEBUG", default=True)
SECRET_KEY = env.str("SECRET_KEY", default="demo-only-not-secret")
SAFEGROUND_DEMO = env.bool("SAFEGROUND_DEMO", default=True)
SAFEGROUND_REQUIRE_2FA = env.bool("SAFEGROUND_REQUIRE_2FA", default=False)
