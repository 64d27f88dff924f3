"""The PostgreSQL statements of the listings that grow with the data read an index (issue 35):
``EXPLAIN`` over a schema seeded with enough rows that the planner chooses by cost.

* every statement the real app sends on the hot paths (``/login``, ``/refresh``, ``/me``, client
  credentials, introspection) and the admin paths (``GET /users`` first and deep page,
  ``GET /audit-events`` unfiltered and by each filter, as superadmin and org_admin,
  ``GET /me/sessions``), recorded from its asyncpg connections while a test client drives it
  over a ``bench.seed`` schema, reads no table that grows with the data whole (no
  ``Seq Scan`` on it);

* the live-session test (``GET /me/sessions``, the purge) joins ``refresh_tokens.family_id`` to
  ``sessions.id``: both must share one collation, else the index on ``family_id`` cannot serve
  the join and every live token in the database is read per listing (1.05 s at 10M rows);
* ``GET /audit-events?type=`` and ``?type=&org_id=`` (an org_admin) read the ``(type, id)`` and
  ``(org_id, type, id)`` indexes in id order instead of scanning the table.
"""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from adapters.persistence.migrate import apply_postgres_migrations
from adapters.persistence.sql import audit, sessions
from domain.audit import AuditQuery
from entrypoints.config import load_config
from entrypoints.container import build_container
from entrypoints.http.app import create_app
from tests.brokers import new_kek
from tests.contract.query_paths import (
    AUDITED_USER,
    DEEP_USER,
    GROWING,
    PATHS,
    drive_paths,
    seed_plan,
)
from tests.pg import drop_pg_schema, new_schema_name, pg_dsn

pytestmark = pytest.mark.postgres

NOW = datetime(2026, 6, 1, tzinfo=UTC)
USERS = 2_000
SESSIONS_PER_USER = 10
AUDIT_ROWS = 50_000

_SEED = f"""
INSERT INTO users (id, email, password_hash, role, org_id, created_at)
SELECT 'u' || lpad(n::text, 6, '0'), 'user' || n || '@example.com', 'x', 'viewer',
       'org-' || (n % 20), '2026-01-01Z'
FROM generate_series(1, {USERS}) n;
INSERT INTO sessions (id, user_id, created_at, last_used_at, expires_at)
SELECT 's' || lpad(n::text, 8, '0'), 'u' || lpad((1 + n % {USERS})::text, 6, '0'),
       '2026-05-01Z', '2026-05-01Z', '2026-09-01Z'
FROM generate_series(1, {USERS * SESSIONS_PER_USER}) n;
INSERT INTO refresh_tokens (token_hash, user_id, family_id, expires_at, session_expires_at,
                            created_at)
SELECT md5(id || n), user_id, id, '2026-07-01Z', '2026-09-01Z', '2026-05-01Z'
FROM sessions, generate_series(1, 2) n;
INSERT INTO audit_events (id, type, occurred_at, actor_id, user_id, org_id, details)
SELECT lpad(to_hex(n), 20, '0'),
       CASE WHEN n % 1000 = 0 THEN 'user.deleted' ELSE 'token.refreshed' END,
       '2026-05-01Z', NULL, 'u' || lpad((1 + n % {USERS})::text, 6, '0'),
       'org-' || (n % 20), '{{}}'::jsonb
FROM generate_series(1, {AUDIT_ROWS}) n;
ANALYZE users, sessions, refresh_tokens, audit_events;
"""
"""Rows enough for the planner to choose by cost. ``ANALYZE`` names this schema's tables: a bare
``ANALYZE`` would lock every table of the database, other tests' schemas included (a deadlock
with a parallel worker's ``TRUNCATE``)."""


@pytest.fixture
async def seeded() -> AsyncIterator[asyncpg.Connection]:
    """A connection to a fresh, migrated, seeded and analysed schema (dropped afterwards)."""
    dsn = pg_dsn()
    if dsn is None:
        pytest.skip("AUTHSVC_TEST_POSTGRES_DSN not set")
    schema = new_schema_name("authsvc_plans")
    apply_postgres_migrations(dsn, schema)
    conn = await asyncpg.connect(dsn, server_settings={"search_path": schema})
    try:
        await conn.execute(_SEED)
        yield conn
    finally:
        await conn.close()
        drop_pg_schema(dsn, schema)


async def _plan(conn: asyncpg.Connection, sql: str, *args: object) -> str:
    rows = await conn.fetch("EXPLAIN " + sql, *args)
    return "\n".join(r[0] for r in rows)


async def test_the_live_session_listing_reads_the_family_index(
    seeded: asyncpg.Connection,
) -> None:
    plan = await _plan(seeded, sessions.LIVE, "u000007", NOW)
    assert "refresh_tokens_family_id_idx" in plan, plan
    assert "Seq Scan on refresh_tokens" not in plan, plan


@pytest.mark.parametrize(
    ("query", "index"),
    [
        (AuditQuery(type="user.deleted"), "audit_events_type_idx"),
        (AuditQuery(type="user.deleted", org_id="org-3"), "audit_events_org_id_type_idx"),
    ],
    ids=["type", "org-and-type"],
)
async def test_an_audit_listing_by_type_reads_an_index(
    seeded: asyncpg.Connection, query: AuditQuery, index: str
) -> None:
    sql, params = audit.page(query, None, 50)
    plan = await _plan(seeded, sql, *params)
    assert index in plan, plan
    assert "Seq Scan on audit_events" not in plan, plan


# ---------------------------------------------------------------------------------------------
# Every statement of the hot and admin paths, as the real app sends it (issue 35 point 2)
# ---------------------------------------------------------------------------------------------

_EXTRA = """
INSERT INTO sessions (id, user_id, created_at, last_used_at, expires_at)
SELECT 'many' || n, u.id, now() - interval '1 day', now(), now() + interval '80 days'
FROM generate_series(1, 100) n, (SELECT id FROM users WHERE email = 'user2@seed.example.com') u;
INSERT INTO refresh_tokens (token_hash, user_id, family_id, expires_at, session_expires_at,
                            created_at)
SELECT md5('many' || n) || md5('t' || n), u.id, 'many' || n, now() + interval '20 days',
       now() + interval '80 days', now()
FROM generate_series(1, 100) n, (SELECT id FROM users WHERE email = 'user2@seed.example.com') u;
INSERT INTO login_failures (key, at)
SELECT 'user' || n || '@seed.example.com', now() - n * interval '1 second'
FROM generate_series(1, 20000) n;
INSERT INTO revoked_access_tokens (jti, client_id, expires_at)
SELECT lpad(to_hex(n), 12, '0'), 'x', now() + interval '1 hour' FROM generate_series(1, 20000) n;
INSERT INTO passkeys (id, user_id, credential_id, public_key, sign_count, aaguid,
                      backup_eligible, backed_up, transports, name, created_at, last_used_at,
                      suspected_clone)
SELECT md5('pk' || n), u.id, decode(md5('c' || n), 'hex'), decode(md5('k' || n), 'hex'), 0,
       '00000000-0000-0000-0000-000000000000', true, true, 'internal', 'extra', now(), NULL,
       false
FROM generate_series(1, 10000) n, LATERAL (SELECT id FROM users OFFSET n % 3000 LIMIT 1) u;
ANALYZE sessions, refresh_tokens, login_failures, revoked_access_tokens, passkeys;
"""
"""What ``bench.seed`` does not write: 100 live sessions of ``user2`` (``GET /me/sessions``; 1
per 150 live tokens — at 1M users a user with 1,000 sessions is 1 per 5,000, and a larger share
makes hashing the whole token table the cheaper plan, rightly), 20,000 failed logins, 20,000
revoked client tokens, 10,000 more passkeys (the seed's 5 % of 3,000 users is a table of a few
pages, which a sequential scan rightly reads whole; at 1M users it is 50,000 rows)."""


@pytest.fixture
async def seeded_app(
    aiohttp_client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[Any, str, str]]:
    """``(client of the real app, DSN, schema)`` over a schema seeded by ``bench.seed`` (dropped
    afterwards)."""
    from bench.seed import PostgresLoader, Seeder

    dsn = pg_dsn()
    if dsn is None:
        pytest.skip("AUTHSVC_TEST_POSTGRES_DSN not set")
    schema = new_schema_name("authsvc_paths")
    try:
        apply_postgres_migrations(dsn, schema)
        conn = await asyncpg.connect(dsn, server_settings={"search_path": schema})
        plan = seed_plan()
        loader = PostgresLoader(conn, schema)
        await Seeder(plan, loader, io.StringIO()).run(want_live=False)
        await loader.finish()  # ANALYZE of the seeded tables, as bench.seed does
        conn = await asyncpg.connect(dsn, server_settings={"search_path": schema})
        try:
            await conn.execute(_EXTRA)
        finally:
            await conn.close()
        environ = {
            "AUTHSVC_STORAGE__BACKEND": "postgres",
            "AUTHSVC_STORAGE__POSTGRES_DSN": dsn,
            "AUTHSVC_STORAGE__POSTGRES_SCHEMA": schema,
            "AUTHSVC_AUTH__KEY_ENCRYPTION_KEY": new_kek(),
            "AUTHSVC_AUTH__KEY_DIR": str(tmp_path / "keys"),
            "AUTHSVC_SERVER__ANONYMOUS_WRITE_RATE": "0",
            "AUTHSVC_STORAGE__PURGE_INTERVAL": "0",
        }
        config = load_config(None, environ=environ)
        client = await aiohttp_client(create_app(build_container(config, environ=environ)))
        yield client, dsn, schema
    finally:
        drop_pg_schema(dsn, schema)


class _Recorder:
    """Every statement (text, arguments) the app's asyncpg connections run, by path."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.path = ""
        self.seen: dict[str, dict[str, tuple[Any, ...]]] = {}
        for name in ("fetch", "fetchrow", "fetchval", "execute", "executemany"):
            original = getattr(asyncpg.connection.Connection, name)
            monkeypatch.setattr(asyncpg.connection.Connection, name, self._wrap(original))

    def _wrap(self, original: Any) -> Any:
        recorder = self

        async def recorded(conn: Any, query: str, *args: Any, **kwargs: Any) -> Any:
            if recorder.path:
                recorder.seen.setdefault(recorder.path, {}).setdefault(query, args)
            return await original(conn, query, *args, **kwargs)

        return recorded


def _explainable(sql: str) -> bool:
    """One data statement (not ``SET``, ``LISTEN``, nor several commands at once)."""
    first = sql.lstrip().split(None, 1)[0].upper()
    return first in ("SELECT", "INSERT", "UPDATE", "DELETE") and ";" not in sql.strip()[:-1]


async def test_every_statement_of_the_hot_and_admin_paths_reads_an_index(
    seeded_app: tuple[Any, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, dsn, schema = seeded_app
    recorder = _Recorder(monkeypatch)

    conn = await asyncpg.connect(dsn, server_settings={"search_path": schema})
    try:
        deep = await conn.fetchval(DEEP_USER)
        audited = await conn.fetchval(AUDITED_USER)
    finally:
        await conn.close()
    await drive_paths(client, recorder, deep, audited)

    conn = await asyncpg.connect(dsn, server_settings={"search_path": schema})
    try:
        checked, offending = 0, []
        for path, statements in recorder.seen.items():
            for sql, args in statements.items():
                if not _explainable(sql):
                    continue
                plan = await _plan(conn, sql, *args)
                checked += 1
                scans = [t for t in GROWING if f"Seq Scan on {t} " in plan + " "]
                if scans:
                    offending.append(f"{path}: {sql}\n{plan}")
    finally:
        await conn.close()
    assert set(recorder.seen) >= PATHS
    assert checked >= 20, recorder.seen
    assert not offending, "\n\n".join(offending)
