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


def _end_connections_of(conn: Any, schema: str, wait_s: float = 0.5) -> None:
    """Wait up to ``wait_s`` seconds for the connections named ``schema`` (a server under test:
    ``with_application_name``) to close; end any still open and raise ``LookupError`` (the
    schema is then dropped, never reused: a server a test left running could write into the next
    test's schema)."""
    import time

    deadline = time.monotonic() + wait_s
    count = "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s"
    while conn.execute(count, (schema,)).fetchone()[0]:
        if time.monotonic() > deadline:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = %s",
                (schema,),
            )
            raise LookupError("still connected")
        time.sleep(0.05)


class _SchemaPool:
    """Migrated PostgreSQL schemas of this test process, emptied after use and handed out
    again: a fresh schema costs its 20-odd migrations (about a second), an emptied one a few
    milliseconds (``empty_schema``). A schema goes back to the pool only when it holds exactly the tables and the
    applied migration ids it had when first migrated, and no server is still connected to it;
    anything else is dropped.

    A schema given back is recycled (checked, emptied) only at the next ``take``: the storage
    fixture is torn down before the app that used it (pytest-aiohttp's ``aiohttp_client`` closes
    its apps last), so at ``give_back`` time its server is often still connected."""

    def __init__(self) -> None:
        self._free: list[str] = []
        self._returned: list[str] = []
        self._shape: tuple[frozenset[str], frozenset[str]] | None = None

    def take(self, dsn: str, prefix: str) -> str:
        """A migrated, empty schema of this process, or a new name (the app migrates it)."""
        while self._returned:
            self._recycle(dsn, self._returned.pop())
        return self._free.pop() if self._free else new_schema_name(prefix)

    def give_back(self, schema: str) -> None:
        """Hand ``schema`` back; the next ``take`` recycles or drops it (see the class)."""
        self._returned.append(schema)

    def _recycle(self, dsn: str, schema: str) -> None:
        """Empty ``schema`` and keep it for the next test, or drop it (see the class)."""
        import psycopg
        from psycopg import sql

        try:
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute("SET lock_timeout = '5s'")
                _end_connections_of(conn, schema)
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
        self._free.extend(self._returned)
        self._returned.clear()
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
    from): a SQLite file in ``tmp_path`` (a copy of this process's migrated template), or an
    empty migrated schema of the test PostgreSQL from this process's pool (a new
    ``<prefix>_…`` one when the pool is empty), where the signing keys live in the database too
    (``auth.key_store`` defaults to ``database`` on PostgreSQL), encrypted under a fresh
    key-encryption key. The DSN names the schema as its ``application_name``, so that the pool
    can see a server still connected afterwards (``_SchemaPool.give_back``). Skips with
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
    schema = SCHEMA_POOL.take(dsn, prefix)
    try:
        yield {"AUTHSVC_STORAGE__BACKEND": "postgres",
               "AUTHSVC_STORAGE__POSTGRES_DSN": with_application_name(dsn, schema),
               "AUTHSVC_STORAGE__POSTGRES_SCHEMA": schema,
               "AUTHSVC_AUTH__KEY_ENCRYPTION_KEY": new_kek()}  # fmt: skip
    finally:
        SCHEMA_POOL.give_back(schema)


def with_application_name(dsn: str, name: str) -> str:
    """``dsn`` with ``application_name=<name>`` (libpq's parameter; asyncpg sends unknown query
    parameters as server settings), visible in ``pg_stat_activity``."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    parts = urlsplit(dsn)
    query = dict(parse_qsl(parts.query))
    query["application_name"] = name
    return urlunsplit(parts._replace(query=urlencode(query)))
