"""The test PostgreSQL: its DSN comes from ``AUTHSVC_TEST_POSTGRES_DSN`` (``.ci/run`` sets it);
without it, Postgres tests skip with ``PG_SKIP_REASON``. Each user of it works in its own schema."""

from __future__ import annotations

import os
import secrets

PG_ENV = "AUTHSVC_TEST_POSTGRES_DSN"
PG_SKIP_REASON = f"{PG_ENV} not set"


def pg_dsn() -> str | None:
    """The test PostgreSQL DSN, or None."""
    return os.environ.get(PG_ENV) or None


def new_schema_name(prefix: str = "authsvc_test") -> str:
    """A fresh schema name, ``<prefix>_<12 hex>``."""
    return f"{prefix}_{secrets.token_hex(6)}"


def drop_pg_schema(dsn: str, schema: str) -> None:
    """Drop ``schema`` and everything in it."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
