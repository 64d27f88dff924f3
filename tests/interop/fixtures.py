"""The interop harness's fixtures (used by ``tests/interop`` and ``tests/e2e`` through their
conftests): the npm packages of ``package-lock.json`` installed once
(``npm ci``), and Debian's Chromium for the browser step.

``npm ci`` runs once per lockfile content: a stamp in ``node_modules`` records the lockfile's
SHA-256, and an exclusive file lock keeps pytest-xdist workers from installing at the same time.
The tests skip, with the reason, only when node or npm is absent; ``.ci/run`` installs Debian's
nodejs and npm and names node in ``AUTHSVC_TEST_NODE``, and then an absent one is a failure."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
LOCKFILE = HERE / "package-lock.json"
STAMP = HERE / "node_modules" / ".authsvc-npm-ci"
CHROMIUM = os.environ.get("AUTHSVC_TEST_CHROMIUM", "/usr/bin/chromium")


@pytest.fixture(scope="session")
def node_modules() -> Path:
    """``tests/interop`` with its ``node_modules`` installed exactly from the lockfile."""
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        if "AUTHSVC_TEST_NODE" in os.environ:
            pytest.fail(f"AUTHSVC_TEST_NODE is set but node or npm is missing: {node=} {npm=}")
        pytest.skip("node and npm are needed for the interop harness (apt-get install nodejs npm)")
    digest = hashlib.sha256(LOCKFILE.read_bytes()).hexdigest()
    with open(HERE / ".npm-ci.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (STAMP.exists() and STAMP.read_text() == digest):
            done = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--prefix", str(HERE)],
                capture_output=True, text=True, timeout=300, check=False,
            )  # fmt: skip
            assert done.returncode == 0, f"npm ci failed:\n{done.stdout}\n{done.stderr}"
            STAMP.write_text(digest)
    return HERE


@pytest.fixture(scope="session")
def chromium() -> Iterator[str]:
    """The Chromium executable Playwright drives (never ``playwright install``)."""
    if not Path(CHROMIUM).exists():
        if "AUTHSVC_TEST_CHROMIUM" in os.environ:
            pytest.fail(f"AUTHSVC_TEST_CHROMIUM={CHROMIUM} does not exist")
        pytest.skip("no Chromium: apt-get install chromium (or set AUTHSVC_TEST_CHROMIUM)")
    yield CHROMIUM
