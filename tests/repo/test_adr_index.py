"""docs/adr: every record has a status line, and docs/adr/README.md indexes each one with it."""

from __future__ import annotations

import re
from pathlib import Path

ADR_DIR = Path(__file__).resolve().parents[2] / "docs" / "adr"
STATUS = re.compile(r"^Status: (accepted|proposed|superseded by \d{4})(;.*)?$")
ROW = re.compile(r"^\| \[(\d{4})\]\(([^)]+)\) \| (.+?) \| (.+) \|$")


def records() -> dict[str, Path]:
    return {path.name[:4]: path for path in sorted(ADR_DIR.glob("[0-9][0-9][0-9][0-9]-*.md"))}


def status_of(path: Path) -> str:
    head = path.read_text(encoding="utf-8").splitlines()[:6]
    lines = [line for line in head if line.startswith("Status:")]
    assert len(lines) == 1, f"{path.name}: no 'Status:' line under the title"
    assert STATUS.match(lines[0]), f"{path.name}: unknown status {lines[0]!r}"
    return lines[0].removeprefix("Status: ")


def index_rows() -> dict[str, tuple[str, str]]:
    rows = {}
    for line in (ADR_DIR / "README.md").read_text(encoding="utf-8").splitlines():
        match = ROW.match(line)
        if match:
            number, target, _title, status = match.groups()
            assert number not in rows, f"ADR {number} indexed twice"
            rows[number] = (target, status)
    return rows


def test_every_record_has_a_status_naming_existing_records() -> None:
    found = records()
    assert found, "no ADRs found"
    for number, path in found.items():
        for referenced in re.findall(r"\b\d{4}\b", status_of(path)):
            assert referenced in found, f"ADR {number}'s status names {referenced}: no such ADR"


def test_the_index_lists_every_record_with_its_status() -> None:
    found = records()
    rows = index_rows()
    assert sorted(rows) == sorted(found)
    for number, path in found.items():
        target, status = rows[number]
        assert target == path.name
        assert status == status_of(path), f"ADR {number}: the index's status differs"
