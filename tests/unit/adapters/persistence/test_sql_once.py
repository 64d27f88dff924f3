"""Each SQL statement of the storage adapters is written once (issue #30): the statements of
``adapters.persistence.sql`` are distinct and each prepares on the migrated SQLite schema; no
statement on a table is written in both backends, or again in a backend or a store beside the
statement modules of ``sql/`` (the stores of ``sql/stores/`` hold none, ADR 0039)."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import sqlite3
from pathlib import Path

import adapters.persistence.sql as sql_package
from adapters.persistence.migrate import apply_sqlite_migrations
from adapters.persistence.sql import mfa
from adapters.persistence.sql.dialect import render

PERSISTENCE = Path(sql_package.__file__).parent.parent
_STATEMENT = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b", re.IGNORECASE)
_ON_TABLE = re.compile(r"\b(FROM|INTO|UPDATE|JOIN)\s+\w+", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"\$[0-9]+(?:::\w+(?:\[\])?)?|\?[0-9]*")


def _normal(sql: str) -> str:
    """The statement with every placeholder as ``?`` and white space folded."""
    return " ".join(_PLACEHOLDER.sub("?", sql).split())


def _sql_constants() -> dict[str, str]:
    """``module.NAME`` -> statement, for every statement constant of the ``sql`` package."""
    found: dict[str, str] = {}
    for info in pkgutil.iter_modules(sql_package.__path__):
        module = importlib.import_module(f"{sql_package.__name__}.{info.name}")
        for name, value in vars(module).items():
            if name.isupper() and isinstance(value, str) and _STATEMENT.match(value):
                found[f"{info.name}.{name}"] = value
    return found


def _literals(backend: str) -> dict[str, str]:
    """Normalized statement -> where, for each string literal (an f-string with ``{}`` for its
    expressions) on a table in ``adapters/persistence/<backend>/``."""
    found: dict[str, str] = {}
    for path in sorted((PERSISTENCE / backend).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
            elif isinstance(node, ast.JoinedStr):
                text = "".join(
                    v.value if isinstance(v, ast.Constant) else "{}" for v in node.values
                )
            else:
                continue
            if _STATEMENT.match(text) and _ON_TABLE.search(text):
                found[_normal(text)] = f"{path.name}:{node.lineno}"
    return found


def test_the_sql_package_holds_statements() -> None:
    assert len(_sql_constants()) > 60


def test_no_statement_appears_twice_in_the_sql_package() -> None:
    seen: dict[str, str] = {}
    twice = []
    for where, statement in _sql_constants().items():
        key = _normal(statement)
        if key in seen:
            twice.append((seen[key], where))
        seen.setdefault(key, where)
    assert twice == []


def test_no_statement_is_written_in_both_backends() -> None:
    sqlite, postgres = _literals("sqlite"), _literals("postgres")
    both = {s: (sqlite[s], postgres[s]) for s in sqlite.keys() & postgres.keys()}
    assert both == {}


def test_no_backend_writes_a_statement_of_the_sql_package_again() -> None:
    shared = {_normal(s): where for where, s in _sql_constants().items()}
    again = {
        (shared[s], where)
        for backend in ("sqlite", "postgres", "memory", "sql/stores")
        for s, where in _literals(backend).items()
        if s in shared
    }
    assert again == set()


def test_the_stores_write_no_statement() -> None:
    """The shared stores run the statements of ``sql/``; the backends keep only the
    statements of their own faults and login-attempt counts, none written twice."""
    assert _literals("sql/stores") == {}


def test_the_scan_finds_statements() -> None:
    """Not blind: the scan sees the statement modules' texts (f-strings included), and the two
    dialects' spellings of one statement compare equal."""
    found = _literals("sql")
    assert any(s.startswith("INSERT INTO refresh_tokens") for s in found)
    assert any(s.startswith("INSERT INTO mfa_recovery_codes") for s in found)
    assert _normal("SELECT a FROM t WHERE b = ?1 AND c = ?") == _normal(
        "SELECT a FROM t\n WHERE b = $1::text AND c = $2"
    )


def test_every_statement_prepares_on_the_sqlite_schema(tmp_path: Path) -> None:
    db = str(tmp_path / "schema.db")
    apply_sqlite_migrations(db)
    with sqlite3.connect(db) as conn:
        for where, statement in _sql_constants().items():
            rendered = render(statement, "sqlite")
            count = max((int(n) for n in re.findall(r"\?([0-9]+)", rendered)), default=0)
            try:
                conn.execute("EXPLAIN " + rendered, (None,) * count)
            except sqlite3.Error as exc:
                raise AssertionError(f"{where}: {exc}: {rendered}") from None


def test_the_recovery_code_insert_prepares_on_the_sqlite_schema(tmp_path: Path) -> None:
    db = str(tmp_path / "schema.db")
    apply_sqlite_migrations(db)
    with sqlite3.connect(db) as conn:
        for count in (1, 10):
            conn.execute(
                "EXPLAIN " + render(mfa.insert_codes(count), "sqlite"), (None,) * (count + 1)
            )
