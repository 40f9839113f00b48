"""What a server process has ready before it serves (safeground.asgi): left to a fresh process's
first request, loading it held the GIL and stopped the scans on the loop and the live frames."""

import os
import subprocess
import sys

from django.conf import settings

READ_BACK = """
import sys
import safeground.asgi
from django.conf import settings
from django.urls import get_resolver
resolver = get_resolver()
print(settings.ROOT_URLCONF in sys.modules, sorted(resolver._reverse_dict))
"""


def test_the_servers_module_has_its_urls_compiled_in_every_language_before_a_request() -> None:
    # A process of its own: in this one, earlier tests have long since loaded the URLs.
    done = subprocess.run(
        [sys.executable, "-c", READ_BACK],
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    languages = sorted(code for code, _name in settings.LANGUAGES)
    assert done.stdout.strip().splitlines()[-1] == f"True {languages}"
