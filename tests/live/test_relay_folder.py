"""The relay's socket lives in a folder of this user's only: checked at every send, so a folder
removed and made again by someone else (or opened up) never receives the log's frames."""

import os
import stat
import tempfile

import pytest

from safeground.live.transport import _relay_names, relay_path


@pytest.fixture
def temp_root(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    _relay_names.cache_clear()  # named once a process: here, under this test's folder
    yield tmp_path / f"safeground-{os.getuid()}"
    _relay_names.cache_clear()


def test_the_folder_is_made_private_and_named_for_the_database(temp_root) -> None:
    path = relay_path()
    assert os.path.dirname(path) == str(temp_root)
    assert path.endswith(".sock") and stat.S_IMODE(temp_root.stat().st_mode) == 0o700


def test_a_folder_opened_up_after_the_first_send_is_refused(temp_root) -> None:
    relay_path()  # named and checked once: the name is kept, the check is not
    temp_root.chmod(0o755)
    with pytest.raises(OSError, match="not a private folder"):
        relay_path()


def test_a_link_in_the_folders_place_is_refused(temp_root, tmp_path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    temp_root.symlink_to(elsewhere)
    with pytest.raises(OSError, match="not a private folder"):
        relay_path()
