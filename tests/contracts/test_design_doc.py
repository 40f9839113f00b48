"""docs/design.md keeps up with the code (issue 36): its layer list ("Layers and boundaries") is the
layers contract in pyproject.toml, and its app table ("The apps and what each owns") names exactly
the apps under src/safeground (a folder with an apps.py). A failure says which line to write
where."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DESIGN = ROOT / "docs" / "design.md"


def contract_layers() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    # The apps' contract (the others layer the modules inside one app, such as entry's).
    (layered,) = [
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c["type"] == "layers" and c.get("containers") == ["safeground"]
    ]
    return [" | ".join(p.strip() for p in layer.split("|")) for layer in layered["layers"]]


def section(heading: str) -> list[str]:
    lines = DESIGN.read_text().splitlines()
    start = lines.index(f"## {heading}") + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start:end]


def documented_layers() -> list[str]:
    # The indented code block: the first run of lines indented by four spaces.
    block: list[str] = []
    for line in section("Layers and boundaries"):
        if line.startswith("    "):
            block.append(" | ".join(p.strip() for p in line.split("|")))
        elif block:
            break
    return block


def peers(layer: str) -> frozenset[str]:
    return frozenset(p.strip() for p in layer.split("|"))


def test_the_layer_list_is_the_layers_contract() -> None:
    contract, documented = contract_layers(), documented_layers()
    for n, layer in enumerate(contract):
        shown = documented[n] if n < len(documented) else None
        if shown is not None and peers(shown) == peers(layer):
            continue
        above = contract[n - 1] if n else None
        where = f"after the line `{above}`" if above else "as the first line"
        assert shown is not None, (
            f"docs/design.md, Layers and boundaries: add the line `    {layer}` {where}"
            " (pyproject.toml's layers contract has it)"
        )
        raise AssertionError(
            f"docs/design.md, Layers and boundaries: line {n + 1} of the layer list reads"
            f" `{shown}`; pyproject.toml's layers contract has `{layer}` there ({where}):"
            f" write `    {layer}`"
        )
    assert len(documented) == len(contract), (
        "docs/design.md, Layers and boundaries: remove the lines after"
        f" `{contract[-1]}` ({documented[len(contract) :]}), which pyproject.toml's layers"
        " contract does not have"
    )


def test_the_app_table_names_every_app() -> None:
    apps = {p.parent.name for p in (ROOT / "src" / "safeground").glob("*/apps.py")}
    rows = {
        m.group(1)
        for line in section("The apps and what each owns")
        if (m := re.match(r"\| `(\w+)` \|", line))
    }
    missing, extra = sorted(apps - rows), sorted(rows - apps)
    assert not missing, (
        "docs/design.md, The apps and what each owns: add a row `| `<app>` | what it owns |` for"
        f" {missing} (each has an apps.py under src/safeground)"
    )
    assert not extra, (
        f"docs/design.md, The apps and what each owns: the rows for {extra} name no app under"
        " src/safeground (no apps.py): remove them or put them under `project modules`"
    )
