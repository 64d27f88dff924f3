"""The repository works on any machine: nothing tracked is a symbolic link that leaves the
checkout, and no tracked file names an absolute path of one machine (issue 9)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path, PurePosixPath

import pytest

ROOT = Path(__file__).resolve().parents[2]

MACHINE_PATH = re.compile(r"(?<![\w.~])/(?:work|root|home|Users|opt|mnt|srv)/[\w.-]+")
"""An absolute path into the folders of one machine (under work, root, home ... at the top)."""


def _git(*args: str) -> str:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout (an installed copy has no tracked files)")
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout  # fmt: skip


def test_no_tracked_symbolic_link_leaves_the_checkout() -> None:
    escaping = []
    for line in _git("ls-files", "-s").splitlines():
        meta, path = line.split("\t", 1)
        mode, blob = meta.split()[:2]
        if mode != "120000":
            continue
        target = _git("cat-file", "-p", blob)
        resolved = PurePosixPath(path).parent / target
        if target.startswith("/") or ".." in PurePosixPath(resolved).parts:
            escaping.append(f"{path} -> {target}")
    assert escaping == []


def test_no_tracked_file_names_an_absolute_path_of_one_machine() -> None:
    found = []
    for path in _git("ls-files").splitlines():
        file = ROOT / path
        if path == "uv.lock" or not file.is_file() or file.is_symlink():
            continue
        try:
            text = file.read_text()
        except UnicodeDecodeError:
            continue
        found += [f"{path}: {m.group(0)}" for m in MACHINE_PATH.finditer(text)]
    assert found == []


_OUTSIDE_CITATION = re.compile(r"contract(\.md)?\W{0,3}(sections?|§)\s*\d|seed\.md", re.IGNORECASE)


def test_no_source_cites_a_document_outside_the_repository() -> None:
    """Docstrings and comments cite RFCs, ADRs or the pages of ``docs/``, which ship with the
    code: never a section of a specification kept elsewhere."""
    sources = [
        path
        for top in ("domain", "application", "adapters", "entrypoints", "service_actuator")
        for path in (ROOT / top).rglob("*")
        if path.suffix in {".py", ".sql", ".html", ".js", ".css"}
    ]
    citing = [
        str(path.relative_to(ROOT))
        for path in sources
        if _OUTSIDE_CITATION.search(path.read_text(encoding="utf-8"))
    ]
    assert sources and citing == []
