"""The test PostgreSQL: its DSN comes from ``AUTHSVC_TEST_POSTGRES_DSN`` (``.ci/run`` sets it);
without it, Postgres tests skip with ``PG_SKIP_REASON``. Each user of it works in its own schema."""

from __future__ import annotations

import functools
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


def empty_schema(conn: Any, schema: str, tables: list[str] | None = None) -> None:
    """Delete every row of ``tables`` (default: every table but yoyo's) in ``schema`` and
    restart its sequences, in one transaction on the psycopg connection ``conn``. ``DELETE`` with the foreign-key triggers
    off (``session_replication_role = replica``: every table is emptied, so nothing dangles)
    takes milliseconds where ``TRUNCATE`` of the same tables replaces their files and takes
    tenths of a second; without the superuser that setting needs, ``TRUNCATE``."""
    import psycopg
    from psycopg import sql

    if tables is None:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,)
            )
            if "yoyo" not in row[0]
        ]
    sequences = [
        row[0]
        for row in conn.execute(
            "SELECT sequencename FROM pg_sequences WHERE schemaname = %s", (schema,)
        )
    ]
    try:
        with conn.transaction():
            conn.execute("SET LOCAL session_replication_role = replica")
            for table in tables:
                conn.execute(sql.SQL("DELETE FROM {}").format(sql.Identifier(schema, table)))
            for sequence in sequences:
                conn.execute(
                    sql.SQL("ALTER SEQUENCE {} RESTART").format(sql.Identifier(schema, sequence))
                )
    except psycopg.errors.InsufficientPrivilege:
        conn.execute(
            sql.SQL("TRUNCATE {} RESTART IDENTITY CASCADE").format(
                sql.SQL(", ").join(sql.Identifier(schema, t) for t in tables)
            )
        )


@functools.cache
def _postgres_migration_ids() -> frozenset[str]:
    """The ids of every PostgreSQL migration the service ships (its file names)."""
    from adapters.persistence.migrate import MIGRATIONS_DIR

    return frozenset(
        p.stem for p in (MIGRATIONS_DIR / "postgres").glob("*.sql") if ".rollback" not in p.name
    )


class _SchemaPool:
    """Migrated PostgreSQL schemas of this test process, emptied after use and handed out
    again: a fresh schema costs its 20-odd migrations (about a second), an emptied one a few
    milliseconds (``empty_schema``). A schema goes back to the pool only when it holds exactly the tables and the
    applied migration ids it had when first migrated; anything else is dropped."""

    def __init__(self) -> None:
        self._free: list[str] = []
        self._shape: tuple[frozenset[str], frozenset[str]] | None = None

    def take(self, prefix: str) -> str:
        """A migrated, empty schema of this process, or a new name (the app migrates it)."""
        return self._free.pop() if self._free else new_schema_name(prefix)

    def give_back(self, dsn: str, schema: str) -> None:
        """Empty ``schema`` and keep it for the next test, or drop it (see the class)."""
        import psycopg
        from psycopg import sql

        try:
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute("SET lock_timeout = '5s'")
                tables = frozenset(
                    row[0]
                    for row in conn.execute(
                        "SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,)
                    )
                )
                if "_yoyo_migration" not in tables:
                    raise LookupError("not migrated")
                applied = frozenset(
                    row[0]
                    for row in conn.execute(
                        sql.SQL("SELECT migration_id FROM {}._yoyo_migration").format(
                            sql.Identifier(schema)
                        )
                    )
                )
                if applied != _postgres_migration_ids():
                    raise LookupError("not fully migrated, or rolled back")
                shape = (tables, applied)
                if self._shape is None:
                    self._shape = shape
                if shape != self._shape:
                    raise LookupError("changed by its test")
                empty_schema(conn, schema, sorted(t for t in tables if "yoyo" not in t))
        except (psycopg.Error, LookupError):
            drop_pg_schema(dsn, schema)
            return
        self._free.append(schema)

    def drop_all(self, dsn: str) -> None:
        """Drop every schema still in the pool (at the end of the test session)."""
        while self._free:
            drop_pg_schema(dsn, self._free.pop())


SCHEMA_POOL = _SchemaPool()
"""This process's reusable schemas (``server_storage``); ``tests/conftest.py`` drops them at
the end of the session."""


class _SqliteTemplate:
    """A SQLite database file migrated once per test process; each server under test starts
    from a copy of it (owner-only, as the service creates its file), so its start applies no
    migration. The migrations themselves are tested from an empty file in
    ``tests/contract/test_migrations.py``."""

    def __init__(self) -> None:
        self._path: Path | None = None

    def copy_to(self, target: Path) -> None:
        """Write a migrated, empty database to ``target`` (mode 0600)."""
        if self._path is None:
            import atexit
            import shutil
            import tempfile

            from adapters.persistence.migrate import apply_sqlite_migrations

            folder = Path(tempfile.mkdtemp(prefix="authsvc_sqlite_template_"))
            atexit.register(shutil.rmtree, folder, True)
            apply_sqlite_migrations(str(folder / "template.db"))
            self._path = folder / "template.db"
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(self._path.read_bytes())


SQLITE_TEMPLATE = _SqliteTemplate()


def server_storage(backend: str, tmp_path: Path, prefix: str) -> Iterator[dict[str, str]]:
    """The storage environment of a server under test (a generator for a fixture to yield
    from): a SQLite file in ``tmp_path`` (a copy of this process's migrated template), or a new
    ``<prefix>_…`` schema of the test PostgreSQL (the server migrates it), where the signing
    keys live in the database too (``auth.key_store`` defaults to ``database`` on PostgreSQL),
    encrypted under a fresh key-encryption key; the schema is dropped afterwards. Skips with
    ``PG_SKIP_REASON`` without a DSN."""
    import pytest

    from tests.brokers import new_kek

    if backend == "sqlite":
        SQLITE_TEMPLATE.copy_to(tmp_path / "authsvc.db")
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
        # Never reused: a server process a test left running (a restarted or killed instance's
        # successor) would write its keys, under its own key-encryption key, into the next
        # test's schema.
        drop_pg_schema(dsn, schema)
