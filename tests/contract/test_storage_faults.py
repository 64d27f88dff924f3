"""Storage faults at the port (issue 21, docs/reference/operations.md): each backend turns "cannot
reach / cannot write" into ``StorageFault``, rolls the unit back (nothing half-written), and
recovers by itself when the fault ends. PostgreSQL: backends terminated (``pg_terminate_backend``)
and a server that refuses connections (a proxy cut off); reads are retried once on a fresh
connection, writes never. SQLite: a full database (a page limit, and a really full filesystem where
a tmpfs can be mounted), a read-only one, and a lock held past the busy timeout."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from adapters.persistence.postgres import PostgresStorage
from adapters.persistence.sqlite import SqliteStorage
from application.ports import Storage, UnitOfWork
from domain.errors import StorageFault
from domain.model import User
from tests.factories import T0, Make, counted, record
from tests.faults import (
    SQLITE_NO_PAGE_LIMIT,
    TcpProxy,
    fill,
    new_application_name,
    small_filesystem,
    sqlite_pragma,
    terminate_backends,
    with_application_name,
)

# ---------------------------------------------------------------------------------- PostgreSQL


@pytest.fixture
def app_name() -> str:
    return new_application_name()


@pytest.fixture
async def pg(dsn: str, fresh_pg_schema: str, app_name: str) -> AsyncIterator[PostgresStorage]:
    """A storage whose connections carry this test's own application name."""
    storage = PostgresStorage(with_application_name(dsn, app_name), 1, 4, schema=fresh_pg_schema)
    await storage.open()
    try:
        yield storage
    finally:
        await storage.close()


async def _stored(storage: Storage, *users: User) -> None:
    async with storage.begin() as uow:
        for user in users:
            await uow.users.add(user)
        await uow.commit()


async def _pid(uow: object) -> int:
    unit = uow._unit  # type: ignore[attr-defined]
    return int(await unit.run(lambda c: c.fetchval("SELECT pg_backend_pid()"), write=False))


@pytest.mark.postgres
async def test_a_read_on_a_terminated_backend_is_retried_on_a_fresh_connection(
    pg: PostgresStorage, dsn: str, app_name: str, make: Make
) -> None:
    user = make.user()
    await _stored(pg, user)
    async with pg.begin() as uow:
        before = await _pid(uow)
        assert await terminate_backends(dsn, app_name) >= 1
        assert await uow.users.get(user.id) == user  # retried, not a fault
        assert await _pid(uow) != before


AFTER_A_WRITE: dict[str, Callable[[UnitOfWork, User], Awaitable[object]]] = {
    "another write": lambda uow, other: uow.users.add(other),  # never replayed
    "a read": lambda uow, other: uow.users.get(other.id),  # not retried: the write died
    "the commit": lambda uow, other: uow.commit(),  # a lost commit: reported as a fault
}


@pytest.mark.postgres
@pytest.mark.parametrize("then", AFTER_A_WRITE)
async def test_after_a_write_a_terminated_backend_is_a_fault_and_nothing_is_written(
    pg: PostgresStorage, dsn: str, app_name: str, make: Make, then: str
) -> None:
    first, second = make.user(), make.user()
    with pytest.raises(StorageFault) as info:
        async with pg.begin() as uow:
            await uow.users.add(first)
            await terminate_backends(dsn, app_name)
            await AFTER_A_WRITE[then](uow, second)
    assert info.value.code == "storage_unavailable" and info.value.retry_after >= 1
    async with pg.begin() as uow:  # a fresh connection, and nothing of the unit
        assert await uow.users.get(first.id) is None
        assert await uow.users.get(second.id) is None


@pytest.mark.postgres
async def test_dead_pooled_connections_are_never_handed_out(
    pg: PostgresStorage, dsn: str, app_name: str, make: Make
) -> None:
    user = make.user()
    await _stored(pg, user)
    for _ in range(3):
        await terminate_backends(dsn, app_name)  # every pooled connection, idle or not
        for _ in range(8):  # more units than the pool has connections
            async with pg.begin() as uow:
                assert await uow.users.get(user.id) == user
        attempts = pg.login_attempts()
        await record(attempts, "k", T0)
        assert await counted(attempts, "k", T0) == [T0]
        await attempts.reset("k")
    await pg.ping()


@pytest.mark.postgres
async def test_a_server_that_refuses_connections_is_a_fault_until_it_is_back(
    dsn: str, fresh_pg_schema: str, make: Make
) -> None:
    proxy = TcpProxy.for_dsn(dsn)
    await proxy.start()
    storage = PostgresStorage(proxy.dsn(dsn), 1, 4, schema=fresh_pg_schema)
    await storage.open()
    try:
        user = make.user()
        await _stored(storage, user)
        await proxy.cut()
        for _ in range(3):
            with pytest.raises(StorageFault):
                async with storage.begin() as uow:
                    await uow.users.get(user.id)
            with pytest.raises(StorageFault):
                await counted(storage.login_attempts(), "k", T0)
        with pytest.raises(OSError):  # the health check says why (refused)
            await storage.ping()
        await proxy.restore()
        async with storage.begin() as uow:
            assert await uow.users.get(user.id) == user
        await storage.ping()
    finally:
        await storage.close()
        await proxy.cut()


# -------------------------------------------------------------------------------------- SQLite


@pytest.fixture
async def lite(tmp_path: Path) -> AsyncIterator[SqliteStorage]:
    storage = SqliteStorage(str(tmp_path / "db" / "authsvc.db"), busy_timeout_ms=200)
    await storage.open()
    try:
        yield storage
    finally:
        await storage.close()


async def test_sqlite_full_database_is_a_fault_and_rolls_back(
    lite: SqliteStorage, make: Make
) -> None:
    users = [make.user() for _ in range(3)]
    await _stored(lite, users[0])
    pages = await sqlite_pragma(lite, "PRAGMA page_count")
    await sqlite_pragma(lite, f"PRAGMA max_page_count = {pages}")  # SQLITE_FULL at the next page
    with pytest.raises(StorageFault) as info:
        async with lite.begin() as uow:
            await uow.users.add(users[1])
            for i in range(200):  # tokens enough to need new pages
                await uow.tokens.add(make.token(users[0].id, token_hash=f"{i:064x}"))
            await uow.commit()
    assert "full" in info.value.detail and info.value.retry_after == 5
    with pytest.raises(StorageFault):  # readiness: DOWN while a probe write cannot commit
        await lite.ping()
    async with lite.begin() as uow:  # reads go on; nothing of the failed unit was written
        assert await uow.users.get(users[0].id) == users[0]
        assert await uow.users.get(users[1].id) is None
        assert await uow.tokens.find(f"{0:064x}") is None
    await sqlite_pragma(lite, f"PRAGMA max_page_count = {SQLITE_NO_PAGE_LIMIT}")
    await lite.ping()  # UP again: the probe commits
    await _stored(lite, users[2])


async def test_sqlite_read_only_database_is_a_fault(lite: SqliteStorage, make: Make) -> None:
    user = make.user()
    await sqlite_pragma(lite, "PRAGMA query_only = ON")  # SQLITE_READONLY for every write
    with pytest.raises(StorageFault) as info:
        async with lite.begin() as uow:
            assert await uow.users.get(user.id) is None  # reads are still served
            await uow.users.add(user)
    assert "read-only" in info.value.detail
    async with lite.begin() as uow:
        assert await uow.users.get(user.id) is None
    with pytest.raises(StorageFault):
        await lite.ping()
    await sqlite_pragma(lite, "PRAGMA query_only = OFF")
    await lite.ping()
    await _stored(lite, user)


async def test_sqlite_lock_held_past_the_busy_timeout_is_a_fault(
    lite: SqliteStorage, make: Make
) -> None:
    other = sqlite3.connect(lite.path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        with pytest.raises(StorageFault) as info:
            async with lite.begin() as uow:
                await uow.users.get("x")
        assert "locked" in info.value.detail and info.value.retry_after == 1
        with pytest.raises(StorageFault):
            await record(lite.login_attempts(), "k", T0)
        await lite.ping()  # contention is not an outage: readiness stays UP
    finally:
        other.execute("ROLLBACK")
        other.close()
    async with lite.begin() as uow:
        assert await uow.users.get("x") is None


async def test_sqlite_on_a_full_filesystem(tmp_path: Path, make: Make) -> None:
    with small_filesystem(tmp_path / "fs") as root:
        storage = SqliteStorage(str(root / "authsvc.db"), busy_timeout_ms=200)
        await storage.open()
        user = make.user()
        await _stored(storage, user)
        filler = fill(root)
        faults = 0
        for i in range(400):  # until the WAL needs a block the disk no longer has
            try:
                async with storage.begin() as uow:
                    await uow.tokens.add(make.token(user.id, token_hash=f"{i:064x}"))
                    await uow.commit()
            except StorageFault as exc:
                assert exc.retry_after == 5
                faults += 1
                if faults == 3:
                    break
        assert faults == 3
        with pytest.raises(StorageFault):
            await storage.ping()
        filler.unlink()
        await storage.ping()
        async with storage.begin() as uow:
            await uow.tokens.add(make.token(user.id, token_hash="f" * 64))
            await uow.commit()
        await storage.close()
        check = sqlite3.connect(storage.path)
        assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        check.close()
