"""Run the README's curl walk-through against a running authsvc and check every step's status.

Usage: ``python3 scripts/readme_walkthrough.py README.md PORT``. Standard library only (it runs
before any virtual environment exists). The ``sh`` block under the "Walk-through (curl)" heading
(``##`` or ``###``: the README's five-minute tour) is taken as it is written; only
``localhost:8080`` becomes ``localhost:PORT`` and ``/tmp/`` a private folder. Each ``# comment``
names the status its ``curl`` must answer (the first three-digit number in it); ``curl`` is
wrapped to record every status. Exit status 0 when every step answered as the README says, 1
otherwise (with what differed).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

HEADING = re.compile(r"^#{2,3} Walk-through \(curl\)$", re.M)
STATUS = re.compile(r"\b([1-5][0-9][0-9])\b")


def walkthrough_block(readme: str) -> str:
    """The first ```sh block after the walk-through heading."""
    parts = HEADING.split(readme, maxsplit=1)
    if len(parts) < 2:
        raise SystemExit(f"no heading matching {HEADING.pattern!r}")
    section = parts[1]
    match = re.search(r"```sh\n(.*?)```", section, re.S)
    if match is None:
        raise SystemExit(f"no ```sh block under {HEADING.pattern!r}")
    return match.group(1)


def expected_statuses(block: str) -> list[int]:
    """The status named by the comment before each ``curl`` command."""
    expected: list[int] = []
    pending: int | None = None
    for line in block.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            found = STATUS.search(stripped)
            pending = int(found.group(1)) if found else pending
        elif re.match(r"^(\S+=\$\()?curl\b", stripped):
            if pending is None:
                raise SystemExit(f"no status named before: {stripped}")
            expected.append(pending)
            pending = None
    return expected


def main(readme_path: str, port: str) -> int:
    block = walkthrough_block(Path(readme_path).read_text())
    expected = expected_statuses(block)
    with tempfile.TemporaryDirectory() as tmp:
        statuses = Path(tmp) / "statuses"
        script = block.replace("localhost:8080", f"localhost:{port}").replace("/tmp/", f"{tmp}/")
        prelude = (
            "set -euo pipefail\n"
            f'curl() {{ command curl --write-out "%{{stderr}}%{{http_code}}\\n" "$@" '
            f"2>>{statuses}; }}\n"
        )
        done = subprocess.run(["bash", "-c", prelude + script], capture_output=True, text=True)
        print(done.stdout)
        got = [int(s) for s in statuses.read_text().split()] if statuses.exists() else []
    if done.returncode != 0 or got != expected:
        print(
            f"walk-through FAILED: exit {done.returncode}, statuses {got}, README says {expected}"
        )
        print(done.stderr)
        return 1
    print(f"walk-through OK: {len(got)} steps answered {got}, as the README says")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
