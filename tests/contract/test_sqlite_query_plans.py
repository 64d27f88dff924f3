"""The SQLite statements of the hot and admin paths read an index (issue 35): the statements
the real app sends on each path (``tests.contract.query_paths``), recorded with SQLite's trace
callback (the SQL with its bound values), then ``EXPLAIN QUERY PLAN`` over a ``bench.seed``
database after ``ANALYZE``: no ``SCAN`` of a table that grows with the data, and a deep page of
users seeks its cursor (the listings bind only the filters given: ``sql.paging``)."""

from __future__ import annotations

import io
import secrets
import sqlite3
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from adapters.persistence.migrate import apply_sqlite_migrations
from adapters.persistence.sql import columns as cols
from adapters.persistence.times import to_micros
from bench.seed import Seeder, SqliteLoader
from entrypoints.config import load_config
from entrypoints.container import build_container
from entrypoints.http.app import create_app
from tests.contract.query_paths import (
    AUDITED_USER,
    DEEP_USER,
    PATHS,
    drive_paths,
    seed_plan,
)

_SMALL = ("CONSTANT", "signing_keys", "groups")
"""What may be scanned: no table (``SCAN CONSTANT ROW``), tables that do not grow with users."""


def _seed_extra(path: Path) -> None:
    """100 live sessions of ``user2``, 20,000 failed logins and revoked client tokens, then
    ``ANALYZE`` (``bench.scale`` analyses its SQLite databases too)."""
    now = datetime.now(UTC)
    with sqlite3.connect(path) as conn:
        user = conn.execute(
            "SELECT id FROM users WHERE email = 'user2@seed.example.com'"
        ).fetchone()[0]
        ids = [f"many{n}" for n in range(100)]
        conn.executemany(
            f"INSERT INTO sessions ({cols.SESSIONS}) VALUES (?, ?, ?, ?, ?, NULL, NULL, NULL, NULL)",
            [(i, user, to_micros(now), to_micros(now), to_micros(now + timedelta(days=80)))
             for i in ids],
        )  # fmt: skip
        conn.executemany(
            f"INSERT INTO refresh_tokens ({cols.TOKENS}) VALUES (?, ?, ?, ?, ?, ?)",
            [(secrets.token_hex(32), user, i, to_micros(now + timedelta(days=20)),
              to_micros(now + timedelta(days=80)), to_micros(now)) for i in ids],
        )  # fmt: skip
        conn.executemany(
            "INSERT INTO login_failures (key, at) VALUES (?, ?)",
            [(f"user{n}@seed.example.com", to_micros(now - timedelta(seconds=n)))
             for n in range(20_000)],
        )  # fmt: skip
        conn.executemany(
            "INSERT INTO revoked_access_tokens (jti, client_id, expires_at) VALUES (?, 'x', ?)",
            [(f"{n:012x}", to_micros(now + timedelta(hours=1))) for n in range(20_000)],
        )
        conn.execute("ANALYZE")


class _Recorder:
    """Every statement (with its values) the app's SQLite connections run, by path: installed
    before the app opens its connections."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.path = ""
        self.seen: dict[str, list[str]] = {}
        connect = sqlite3.connect

        def traced(*args: Any, **kwargs: Any) -> sqlite3.Connection:
            conn = connect(*args, **kwargs)
            conn.set_trace_callback(self._add)
            return conn

        monkeypatch.setattr(sqlite3, "connect", traced)

    def _add(self, sql: str) -> None:
        if self.path:
            self.seen.setdefault(self.path, []).append(sql)


@pytest.fixture
async def recorded(
    aiohttp_client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[dict[str, list[str]], Path]]:
    """``(statements by path, database file)``: the real app over a ``bench.seed`` SQLite
    database, driven through every path."""
    db = tmp_path / "seeded.db"
    apply_sqlite_migrations(str(db))
    loader = SqliteLoader(str(db))
    await Seeder(seed_plan(), loader, io.StringIO()).run(want_live=False)
    await loader.finish()
    _seed_extra(db)
    with sqlite3.connect(db) as conn:
        deep, audited = (conn.execute(q).fetchone()[0] for q in (DEEP_USER, AUDITED_USER))
    environ = {
        "AUTHSVC_STORAGE__BACKEND": "sqlite",
        "AUTHSVC_STORAGE__SQLITE_PATH": str(db),
        "AUTHSVC_AUTH__KEY_DIR": str(tmp_path / "keys"),
        "AUTHSVC_SERVER__ANONYMOUS_WRITE_RATE": "0",
        "AUTHSVC_STORAGE__PURGE_INTERVAL": "0",
    }
    recorder = _Recorder(monkeypatch)
    config = load_config(None, environ=environ)
    client = await aiohttp_client(create_app(build_container(config, environ=environ)))
    await drive_paths(client, recorder, deep, audited)
    yield recorder.seen, db


def _plan(db: Path, sql: str) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql)]


def _scans(db: Path, sql: str) -> tuple[list[str], str]:
    """(the plan's whole-table scans of tables that grow, the plan as text). A walk of an index
    in the order of a listing with a ``LIMIT`` (``SCAN t USING INDEX i`` for ``ORDER BY id
    LIMIT n``) stops after the page, as PostgreSQL's ``Index Scan`` of a first page does: not
    a whole scan."""
    details = _plan(db, sql)
    ordered_page = "ORDER BY" in sql and "LIMIT" in sql
    scans = [d for d in details if d.startswith("SCAN ") and d.split()[1] not in _SMALL
             and not (ordered_page and " USING " in d)]  # fmt: skip
    return scans, "\n".join(details)


def _data(sql: str) -> bool:
    first = sql.lstrip().split(None, 1)[0].upper()
    return first in ("SELECT", "INSERT", "UPDATE", "DELETE")


DEEP_PAGE = "GET /users deep"


async def test_every_statement_of_the_hot_and_admin_paths_reads_an_index(
    recorded: tuple[dict[str, list[str]], Path],
) -> None:
    seen, db = recorded
    checked, offending = 0, []
    for path, statements in seen.items():
        if path == DEEP_PAGE:
            continue  # the known defect: test_a_deep_page_of_users_seeks_its_cursor
        for sql in dict.fromkeys(statements):
            if _data(sql):
                scans, plan = _scans(db, sql)
                checked += 1
                if scans:
                    offending.append(f"{path}: {sql}\n{plan}")
    assert set(seen) >= PATHS
    assert checked >= 20, seen
    assert not offending, "\n\n".join(offending)


async def test_a_deep_page_of_users_seeks_its_cursor(
    recorded: tuple[dict[str, list[str]], Path],
) -> None:
    seen, db = recorded
    listing = [sql for sql in seen[DEEP_PAGE] if "ORDER BY id" in sql and "FROM users" in sql]
    assert listing, seen[DEEP_PAGE]
    plan = _plan(db, listing[0])
    assert any(d.startswith("SEARCH users") and "(id>?)" in d for d in plan), plan
