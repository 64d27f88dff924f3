"""README.md stays the front door: at most 250 lines, and its map (the table under "## Map")
names only folders that exist and every package folder at the depths it covers — each top-level
package, and each package directly inside domain/, application/, adapters/, entrypoints/,
service_actuator/ and tests/."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MAX_LINES = 250
MAPPED_ROOTS = ("domain", "application", "adapters", "entrypoints", "service_actuator", "tests")
ROW = re.compile(r"^\| `([^`]+/)` \| .+ \|$")


def map_folders() -> list[str]:
    """The folders of the map's rows, as written (``application/login/``), in order."""
    section = README.read_text(encoding="utf-8").split("\n## Map\n", 1)
    assert len(section) == 2, "README.md has no '## Map' section"
    body = section[1].split("\n## ", 1)[0]
    return [match.group(1) for line in body.splitlines() if (match := ROW.match(line))]


def packages() -> set[str]:
    """Package folders (with ``__init__.py``) at the top level and one level inside the mapped
    roots, written like the map's rows."""
    found = {f"{p.parent.name}/" for p in ROOT.glob("*/__init__.py")}
    for name in MAPPED_ROOTS:
        found |= {f"{name}/{p.parent.name}/" for p in (ROOT / name).glob("*/__init__.py")}
    return found


def test_readme_is_at_most_250_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines (at most {MAX_LINES})"


def test_the_map_lists_each_folder_once() -> None:
    folders = map_folders()
    assert folders, "the map has no rows"
    assert len(folders) == len(set(folders)), "a folder is listed twice"


def test_every_folder_of_the_map_exists() -> None:
    missing = [folder for folder in map_folders() if not (ROOT / folder).is_dir()]
    assert missing == [], f"the README's map lists folders that do not exist: {missing}"


def test_every_package_folder_is_on_the_map() -> None:
    unlisted = sorted(packages() - set(map_folders()))
    assert unlisted == [], f"the README's map does not list: {unlisted}"


def test_the_mapped_roots_are_on_the_map() -> None:
    listed = set(map_folders())
    assert {f"{name}/" for name in MAPPED_ROOTS} <= listed
