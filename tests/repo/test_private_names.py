"""No module imports an underscore name of another (issue 30): what modules share has a public
name, and a private one stays in its module. Checked over every Python file of the project,
tests and benchmarks included; third-party private modules count too."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("domain", "application", "adapters", "entrypoints", "service_actuator", "tests", "bench")


def _private(name: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in name.split("."))


def private_imports(source: str) -> list[str]:
    """The ``from m import _x``, ``from m._p import x`` and ``import m._p`` of ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            names = [a.name for a in node.names if _private(a.name)]
            if _private(node.module) or names:
                found.append(f"line {node.lineno}: from {node.module} import {names or '...'}")
        elif isinstance(node, ast.Import):
            found += [
                f"line {node.lineno}: import {a.name}" for a in node.names if _private(a.name)
            ]
    return found


def test_the_check_sees_each_form() -> None:
    source = "from a import _b\nfrom a._c import d\nimport a._e\nfrom a import b, __version__\n"
    assert len(private_imports(source)) == 3


def test_no_module_imports_a_private_name_of_another() -> None:
    offenders = {
        str(path.relative_to(ROOT)): found
        for folder in FOLDERS
        for path in sorted((ROOT / folder).rglob("*.py"))
        if (found := private_imports(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}
