"""The SQLite storage's three connections (ADR 0022): statements that cannot wait run on the
event loop's thread; a unit of work whose write lock another process holds waits on aiosqlite's
thread instead (the loop keeps running) and succeeds once the lock is free; read-only units are
served beside a writer; the WAL is checkpointed although the writer's automatic checkpoint is
off."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import sqlite3
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from adapters.persistence.sqlite import SqliteStorage
from adapters.persistence.sqlite import storage as sqlite_storage
from domain.errors import StorageFault
from tests.factories import Make, counted, record

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
async def lite(tmp_path: Path) -> AsyncIterator[SqliteStorage]:
    storage = SqliteStorage(str(tmp_path / "authsvc.db"), busy_timeout_ms=2000)
    await storage.open()
    try:
        yield storage
    finally:
        await storage.close()


def other_process(lite: SqliteStorage) -> sqlite3.Connection:
    """A connection of its own, as another process would have."""
    return sqlite3.connect(lite.path, isolation_level=None)


@contextlib.asynccontextmanager
async def loop_watch(every: float) -> AsyncIterator[Callable[[], float]]:
    """While inside, a task wakes every ``every`` seconds; yields a function giving the longest
    gap between two wake-ups so far (seconds): the longest time the loop was held up."""
    loop = asyncio.get_running_loop()
    ticks: list[float] = []

    async def ticking() -> None:
        while True:
            ticks.append(loop.time())
            await asyncio.sleep(every)

    ticker = asyncio.create_task(ticking())
    await asyncio.sleep(0)  # running
    try:
        yield lambda: max(b - a for a, b in itertools.pairwise(ticks))
    finally:
        ticker.cancel()


async def test_a_unit_waits_for_another_writer_off_the_loop(lite: SqliteStorage) -> None:
    other = other_process(lite)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    loop = asyncio.get_running_loop()

    async def release_later() -> None:
        await asyncio.sleep(0.3)
        other.execute("ROLLBACK")

    async with loop_watch(0.01) as longest_gap:
        releaser = asyncio.create_task(release_later())
        await asyncio.sleep(0)  # running
        started = loop.time()
        attempts = lite.login_attempts()
        await record(attempts, "k", T0)  # waits for the lock, then commits
        waited = loop.time() - started
        await releaser
        assert waited >= 0.25  # it did wait for the other writer ...
        assert longest_gap() < 0.15, longest_gap()  # ... and the loop ran all along
    assert await counted(attempts, "k", T0) == [T0]
    other.close()


async def test_a_writer_held_past_the_busy_timeout_is_a_fault(tmp_path: Path) -> None:
    lite = SqliteStorage(str(tmp_path / "authsvc.db"), busy_timeout_ms=100)
    await lite.open()
    other = other_process(lite)
    other.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StorageFault):
            await record(lite.login_attempts(), "k", T0)
    finally:
        other.execute("ROLLBACK")
        other.close()
    await record(lite.login_attempts(), "k", T0)  # the unit after it works
    await lite.close()


async def test_read_only_units_are_served_beside_a_unit_of_work(
    lite: SqliteStorage, make: Make
) -> None:
    user = make.user()
    async with lite.begin() as uow:
        await uow.users.add(user)
        await uow.commit()
    async with lite.begin() as uow:  # holds this process's writer ...
        await uow.users.add(make.user())
        async with lite.read() as reader:  # ... while a read-only unit reads what is committed
            assert await reader.users.get(user.id) == user
        await uow.commit()


async def test_the_wal_is_checkpointed_by_the_storage(
    lite: SqliteStorage, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_storage, "CHECKPOINT_EVERY", 10)
    attempts = lite.login_attempts()
    wal = Path(lite.path + "-wal")
    sizes = []
    for i in range(400):
        await record(attempts, f"key-{i}-" + "x" * 2000, T0 + timedelta(seconds=i))
        sizes.append(wal.stat().st_size)
    # Without checkpoints the WAL holds every commit's pages (400 commits: megabytes); with
    # one every 10 commits it is reset and stays a few dozen pages.
    assert max(sizes) < 400 * 1024, max(sizes)


async def test_a_large_purge_runs_off_the_loop(lite: SqliteStorage, make: Make) -> None:
    user = make.user()
    async with lite.begin() as uow:
        await uow.users.add(user)
        await uow.commit()
    n = 200_000
    bulk = other_process(lite)
    bulk.execute("BEGIN")  # expired tokens enough for a purge of a few hundred milliseconds
    bulk.executemany(
        "INSERT INTO refresh_tokens VALUES (?, ?, 'f', 1, 1, 1)",
        ((f"{i:064x}", user.id) for i in range(n)),
    )
    bulk.execute("COMMIT")
    bulk.close()
    loop = asyncio.get_running_loop()
    async with loop_watch(0.005) as longest_gap:
        started = loop.time()
        async with lite.begin() as uow:
            assert await uow.tokens.purge_expired(T0) == n
            await uow.commit()
        took = loop.time() - started
        assert longest_gap() < took / 2, (longest_gap(), took)  # the loop ran during the purge


async def test_a_read_only_unit_cannot_write(lite: SqliteStorage, make: Make) -> None:
    async with lite.read() as uow:
        with pytest.raises(RuntimeError):
            await uow.users.add(make.user())


class BusyOnce:
    """A reader whose next statement answers busy (as during a WAL reset), then reads."""

    def __init__(self, reader: sqlite3.Connection) -> None:
        self.reader = reader
        self.busy = True

    def execute(self, sql: str, args: tuple[object, ...] = ()) -> sqlite3.Cursor:
        if self.busy:
            self.busy = False
            exc = sqlite3.OperationalError("database is locked")
            exc.sqlite_errorcode = sqlite3.SQLITE_BUSY  # type: ignore[attr-defined]
            raise exc
        return self.reader.execute(sql, args)


async def test_a_busy_reader_reads_through_aiosqlite(
    lite: SqliteStorage, make: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = make.user()
    async with lite.begin() as uow:
        await uow.users.add(user)
        await uow.commit()
    assert lite._reader is not None
    busy = BusyOnce(lite._reader)
    monkeypatch.setattr(lite, "_reader", busy)
    async with lite.read() as uow:
        assert await uow.users.get(user.id) == user
    assert not busy.busy  # the reader did answer busy; the row came through aiosqlite
