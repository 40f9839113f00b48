"""The scanner page and its service worker with production's hashed static names: the ZXing file
the worker keeps for offline use is the very URL the page hands to the camera module."""

import json
import re

import pytest
from django.core.management import call_command
from django.test import Client

pytestmark = pytest.mark.django_db

ZXING = re.compile(r"^/static/vendor/zxing-library-0\.23\.0\.min\.[0-9a-f]{12}\.js$")


@pytest.fixture
def hashed_static(settings, tmp_path):
    """Static files collected as production does, under names carrying their content's hash."""
    settings.STATIC_ROOT = tmp_path / "static"
    settings.STORAGES = settings.STORAGES | {
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.ManifestStaticFilesStorage"}
    }
    call_command("collectstatic", interactive=False, verbosity=0)


def page_config(html: str) -> dict:
    found = re.search(r'<script id="scanner-config" type="application/json">(.*?)</script>', html)
    assert found, "the page carries its configuration"
    return json.loads(found.group(1))


def test_the_worker_keeps_the_zxing_file_the_page_gives_the_camera_module(hashed_static) -> None:
    page = Client().get("/entry/scanner/")
    assert page.status_code == 200
    config = page_config(page.content.decode())
    assert ZXING.match(config["zxing"]), config["zxing"]

    worker = Client().get("/entry/scanner/sw.js")
    assert worker.status_code == 200
    assets = json.loads(re.search(r"^const ASSETS = (.*);$", worker.content.decode(), re.M)[1])
    assert config["zxing"] in assets
    assert config["cameraModule"] in assets
    # And the page's own files, as its tags name them.
    tags = re.findall(r'(?:src|href)="(/static/[^"]+)"', page.content.decode())
    assert len(tags) >= 5 and set(tags) <= set(assets)
