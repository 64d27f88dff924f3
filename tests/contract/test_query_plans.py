"""The PostgreSQL statements of the listings that grow with the data read an index (issue 35):
``EXPLAIN`` over a schema seeded with enough rows that the planner chooses by cost.

* the live-session test (``GET /me/sessions``, the purge) joins ``refresh_tokens.family_id`` to
  ``sessions.id``: both must share one collation, else the index on ``family_id`` cannot serve
  the join and every live token in the database is read per listing (1.05 s at 10M rows);
* ``GET /audit-events?type=`` and ``?type=&org_id=`` (an org_admin) read the ``(type, id)`` and
  ``(org_id, type, id)`` indexes in id order instead of scanning the table.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import asyncpg
import pytest

from adapters.persistence.migrate import apply_postgres_migrations
from adapters.persistence.sql import audit, sessions
from domain.audit import AuditQuery
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
