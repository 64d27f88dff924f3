"""Migrations at size (issue #35, point 3; docs/scaling.md "Migrations on large tables"): on
PostgreSQL 11+ ``ALTER TABLE ... ADD COLUMN ... DEFAULT <constant>`` changes the catalog only —
no table rewrite, its ACCESS EXCLUSIVE lock held for milliseconds at any row count — while a
volatile default rewrites the whole table under that lock. The first test shows both on a
200,000-row ``audit_events`` (the relfilenode changes only on a rewrite); the second keeps every
shipped PostgreSQL migration on the safe side."""

from __future__ import annotations

import re
import time

import psycopg
import pytest
from psycopg import sql

from adapters.persistence.migrate import MIGRATIONS_DIR, apply_postgres_migrations
from tests.pg import PG_SKIP_REASON, drop_pg_schema, new_schema_name, pg_dsn

ROWS = 200_000

_ADD_COLUMN = re.compile(r"ADD\s+COLUMN\s+(?:IF\s+NOT\s+EXISTS\s+)?\w+\s+([^,;]*)", re.I | re.S)
_DEFAULT = re.compile(r"\bDEFAULT\s+(.+?)\s*$", re.I | re.S)
_CONSTANT = re.compile(r"^(?:'[^']*'|-?\d+(?:\.\d+)?|TRUE|FALSE|NULL)(?:\s*::\s*[\w ]+)?$", re.I)
"""A default PostgreSQL evaluates once, at ALTER time: a literal, optionally cast."""


@pytest.mark.postgres
def test_add_column_with_a_constant_default_does_not_rewrite_a_large_table() -> None:
    dsn = pg_dsn()
    if dsn is None:
        pytest.skip(PG_SKIP_REASON)
    schema = new_schema_name("authsvc_locks")
    try:
        apply_postgres_migrations(dsn, schema)
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
            conn.execute(
                "INSERT INTO audit_events (id, type, occurred_at, user_id, org_id, details)"
                " SELECT lpad(to_hex(n), 32, '0'), 'token.refreshed', now(), md5(n::text),"
                " 'default', '{\"session_id\": \"x\"}' FROM generate_series(1, %s) n",
                (ROWS,),
            )

            def filenode() -> int:
                row = conn.execute("SELECT pg_relation_filenode('audit_events')").fetchone()
                assert row is not None
                return int(row[0])

            before = filenode()
            started = time.perf_counter()
            conn.execute("SET lock_timeout = '1s'")  # the rule for every migration
            conn.execute(
                "ALTER TABLE audit_events ADD COLUMN region TEXT NOT NULL DEFAULT 'eu-west'"
            )
            elapsed = time.perf_counter() - started
            assert filenode() == before, "a constant default must not rewrite the table"
            assert elapsed < 1.0, f"ADD COLUMN took {elapsed:.2f} s on {ROWS:,} rows"
            row = conn.execute("SELECT count(*) FROM audit_events WHERE region = 'eu-west'")
            assert row.fetchone() == (ROWS,)  # existing rows read the default

            # The contrast: a volatile default is evaluated per row — a full rewrite.
            conn.execute("SET lock_timeout = 0")
            conn.execute(
                "ALTER TABLE audit_events ADD COLUMN seen TIMESTAMPTZ DEFAULT clock_timestamp()"
            )
            assert filenode() != before
    finally:
        drop_pg_schema(dsn, schema)


def test_shipped_postgres_migrations_add_columns_with_constant_defaults_only() -> None:
    checked = 0
    for path in sorted((MIGRATIONS_DIR / "postgres").glob("*.sql")):
        if path.name.endswith(".rollback.sql"):
            continue
        text = "\n".join(
            line.split("--", 1)[0] for line in path.read_text().splitlines()
        )  # without comments
        for match in _ADD_COLUMN.finditer(text):
            default = _DEFAULT.search(match.group(1))
            checked += 1
            if default is not None:
                value = re.sub(r"\s+NOT\s+NULL\s*$", "", default.group(1), flags=re.I).strip()
                assert _CONSTANT.match(value), (
                    f"{path.name}: ADD COLUMN ... DEFAULT {value} is not a constant: PostgreSQL"
                    " would rewrite the table under an exclusive lock (docs/scaling.md)"
                )
    assert checked >= 5  # 0004, 0006, 0013 add columns: the pattern still finds them
