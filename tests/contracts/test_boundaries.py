"""The app boundaries are import-linter contracts (pyproject.toml), run by `make lint`. These
tests run the same command: the tree as it is keeps every contract, and one forbidden import
added to a copy of it breaks the contract that names it."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(source: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--config", str(ROOT / "pyproject.toml")],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(source)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_code_keeps_every_contract() -> None:
    result = lint_imports(ROOT / "src")
    assert result.returncode == 0, result.stdout
    assert " 0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "forbidden", "contract"),
    [
        ("bans", "safeground.entry.models", "The register never imports the gates"),
        ("live", "safeground.incidents.models", "Live never imports the log"),
        ("matches", "safeground.demo", "Nothing but the demo imports the demo"),
        ("venues", "safeground.matches.models", "Apps are layered"),
    ],
)
def test_a_forbidden_import_breaks_its_contract(tmp_path, module, forbidden, contract) -> None:
    copy = tmp_path / "safeground"
    shutil.copytree(ROOT / "src" / "safeground", copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / module / "crossing.py").write_text(f"import {forbidden}  # noqa\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    broken = result.stdout.split("Broken contracts")[-1]
    assert contract in broken
    assert f"safeground.{module}.crossing -> {forbidden}" in broken
