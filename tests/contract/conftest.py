"""Fixtures of the contract suites: every port's suite runs over every storage adapter.

``storage`` is parametrized over ``memory``, ``sqlite`` (a file in ``tmp_path``) and ``postgres``.
The postgres parameter needs ``AUTHSVC_TEST_POSTGRES_DSN`` (a ``postgresql://`` URI) and skips
without it; the test session creates its own schema ``authsvc_test_<hex>``, migrates it once,
empties its tables after each test, and drops it at the end.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from adapters.persistence.memory import MemoryLoginAttempts, MemoryStorage
from adapters.persistence.migrate import apply_postgres_migrations
from adapters.persistence.postgres import PostgresStorage
from adapters.persistence.sqlite import SqliteStorage
from application.ports import LoginAttempts, Storage
from tests.factories import Make, StorageFactory
from tests.pg import (
    PG_SKIP_REASON,
    SQLITE_TEMPLATE,
    drop_pg_schema,
    empty_schema,
    new_schema_name,
    pg_dsn,
)

BACKENDS = [
    "memory",
    "sqlite",
    pytest.param("postgres", marks=pytest.mark.postgres),
]


@pytest.fixture(scope="session")
def pg_schema() -> Iterator[str]:
    """This session's migrated PostgreSQL schema (skips when no DSN is configured)."""
    dsn = pg_dsn()
    if dsn is None:
        pytest.skip(PG_SKIP_REASON)
    schema = new_schema_name()
    try:
        apply_postgres_migrations(dsn, schema)
        yield schema
    finally:
        drop_pg_schema(dsn, schema)


@pytest.fixture
def dsn() -> str:
    """The test PostgreSQL's DSN (skips when none is configured)."""
    value = pg_dsn()
    if value is None:
        pytest.skip(PG_SKIP_REASON)
    return value


@pytest.fixture
def fresh_pg_schema() -> Iterator[str]:
    """A new, empty schema name for one test (not created); dropped afterwards."""
    dsn = pg_dsn()
    if dsn is None:
        pytest.skip(PG_SKIP_REASON)
    schema = new_schema_name()
    try:
        yield schema
    finally:
        drop_pg_schema(dsn, schema)


def _empty_session_schema(schema: str) -> None:
    """Empty this session's schema for the next test (``tests.pg.empty_schema``)."""
    import psycopg

    with psycopg.connect(pg_dsn() or "", autocommit=True) as conn:
        empty_schema(conn, schema)


@pytest.fixture(params=BACKENDS)
async def store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[str, Storage, StorageFactory]]:
    """``(backend name, an open Storage, factory of a second open Storage on the same
    data)``. The second one is the same object for memory (one process, one store), another
    connection on the same file for SQLite, and another pool on the same schema for PostgreSQL.
    """
    backend: str = request.param
    opened: list[Storage] = []

    async def open_one() -> Storage:
        storage: Storage
        if backend == "memory":
            if opened:
                return opened[0]
            storage = MemoryStorage()
        elif backend == "sqlite":
            path = tmp_path / "db" / "authsvc.db"
            if not path.exists():  # migrated from empty in test_migrations.py
                SQLITE_TEMPLATE.copy_to(path)
            storage = SqliteStorage(str(path))
        else:
            schema = request.getfixturevalue("pg_schema")
            storage = PostgresStorage(pg_dsn() or "", 1, 5, schema=schema)
        await storage.open()
        opened.append(storage)
        return storage

    if backend == "postgres" and pg_dsn() is None:
        pytest.skip(PG_SKIP_REASON)
    first = await open_one()
    try:
        yield backend, first, open_one
    finally:
        if isinstance(first, PostgresStorage):
            _empty_session_schema(request.getfixturevalue("pg_schema"))
        for storage in reversed(opened):
            await storage.close()


@pytest.fixture
def storage(store: tuple[str, Storage, StorageFactory]) -> Storage:
    """An open Storage of each backend, empty."""
    return store[1]


@pytest.fixture
def storage_name(store: tuple[str, Storage, StorageFactory]) -> str:
    """The name of the backend under test."""
    return store[0]


@pytest.fixture
def open_peer(store: tuple[str, Storage, StorageFactory]) -> StorageFactory:
    """Opens another Storage over the same data as ``storage`` (closed by the fixture)."""
    return store[2]


@pytest.fixture
def login_attempts(store: tuple[str, Storage, StorageFactory]) -> LoginAttempts:
    """A LoginAttempts of each backend, empty."""
    _, storage, _ = store
    if isinstance(storage, SqliteStorage | PostgresStorage):
        return storage.login_attempts()
    return MemoryLoginAttempts()


@pytest.fixture
def make() -> Make:
    """Builders of users, tokens and groups."""
    return Make()
