"""The test PostgreSQL: its DSN comes from ``AUTHSVC_TEST_POSTGRES_DSN`` (``.ci/run`` sets it);
without it, Postgres tests skip with ``PG_SKIP_REASON``. Each user of it works in its own schema."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

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


def server_storage(backend: str, tmp_path: Path, prefix: str) -> Iterator[dict[str, str]]:
    """The storage environment of a server under test (a generator for a fixture to yield
    from): a SQLite file in ``tmp_path``, or a fresh ``<prefix>_…`` schema of the test
    PostgreSQL (dropped afterwards) where the signing keys live in the database too
    (``auth.key_store`` defaults to ``database`` on PostgreSQL), encrypted under a fresh
    key-encryption key. Skips with ``PG_SKIP_REASON`` without a DSN."""
    import pytest

    from tests.brokers import new_kek

    if backend == "sqlite":
        yield {"AUTHSVC_STORAGE__BACKEND": "sqlite",
               "AUTHSVC_STORAGE__SQLITE_PATH": str(tmp_path / "authsvc.db")}  # fmt: skip
        return
    dsn = pg_dsn()
    if dsn is None:
        pytest.skip(PG_SKIP_REASON)
    schema = new_schema_name(prefix)
    try:
        yield {"AUTHSVC_STORAGE__BACKEND": "postgres", "AUTHSVC_STORAGE__POSTGRES_DSN": dsn,
               "AUTHSVC_STORAGE__POSTGRES_SCHEMA": schema,
               "AUTHSVC_AUTH__KEY_ENCRYPTION_KEY": new_kek()}  # fmt: skip
    finally:
        drop_pg_schema(dsn, schema)
