"""Contract of the TokenStore port, over every storage adapter."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest

from adapters.persistence.sqlite import SqliteStorage
from application.ports import Storage
from domain.errors import Conflict, NotFound
from domain.model import RefreshToken
from tests.factories import T0, Make, StorageFactory

CONCURRENT_TAKES = 20


async def _with_user(storage: Storage, make: Make, user_id: str = "owner") -> str:
    async with storage.begin() as uow:
        await uow.users.add(make.user(id=user_id))
        await uow.commit()
    return user_id


async def _add_tokens(storage: Storage, *tokens: RefreshToken) -> None:
    async with storage.begin() as uow:
        for t in tokens:
            await uow.tokens.add(t)
        await uow.commit()


async def test_add_then_find_round_trips_to_the_microsecond(storage: Storage, make: Make) -> None:
    user_id = await _with_user(storage, make)
    token = make.token(user_id)
    await _add_tokens(storage, token)
    async with storage.begin() as uow:
        found = await uow.tokens.find(token.token_hash)
    assert found == token
    assert found is not None
    assert found.expires_at.utcoffset() == timedelta(0)
    assert found.expires_at.microsecond == token.expires_at.microsecond


async def test_find_of_unknown_hash_is_none(storage: Storage) -> None:
    async with storage.begin() as uow:
        assert await uow.tokens.find("0" * 64) is None
        assert await uow.tokens.take("0" * 64) is None


async def test_take_returns_the_token_once_and_deletes_it(storage: Storage, make: Make) -> None:
    user_id = await _with_user(storage, make)
    token = make.token(user_id)
    await _add_tokens(storage, token)
    async with storage.begin() as uow:
        assert await uow.tokens.take(token.token_hash) == token
        assert await uow.tokens.take(token.token_hash) is None
        assert await uow.tokens.find(token.token_hash) is None
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.tokens.find(token.token_hash) is None


async def test_add_of_an_existing_hash_is_a_conflict(storage: Storage, make: Make) -> None:
    user_id = await _with_user(storage, make)
    token = make.token(user_id)
    await _add_tokens(storage, token)
    async with storage.begin() as uow:
        with pytest.raises(Conflict):
            await uow.tokens.add(token)


async def test_add_for_an_unknown_user_is_not_found(storage: Storage, make: Make) -> None:
    async with storage.begin() as uow:
        with pytest.raises(NotFound):
            await uow.tokens.add(make.token("ghost"))


async def test_rotated_hashes_are_remembered_apart_from_live_tokens(
    storage: Storage, make: Make
) -> None:
    user_id = await _with_user(storage, make)
    token = make.token(user_id)
    async with storage.begin() as uow:
        await uow.tokens.remember_rotated(token, T0)
        await uow.tokens.remember_rotated(token, T0)  # remembering twice is harmless
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.tokens.find_rotated(token.token_hash) == token
        assert await uow.tokens.find(token.token_hash) is None
        assert await uow.tokens.take(token.token_hash) is None
        assert await uow.tokens.find_rotated("f" * 64) is None


async def test_purge_expired_deletes_live_and_rotated_at_or_before_now(
    storage: Storage, make: Make
) -> None:
    user_id = await _with_user(storage, make)
    now = T0 + timedelta(hours=1)
    past = make.token(user_id, expires_at=now - timedelta(microseconds=1))
    at_now = make.token(user_id, expires_at=now)
    future = make.token(user_id, expires_at=now + timedelta(microseconds=1))
    rotated_past = make.token(user_id, expires_at=now - timedelta(seconds=5))
    rotated_future = make.token(user_id, expires_at=now + timedelta(seconds=5))
    await _add_tokens(storage, past, at_now, future)
    async with storage.begin() as uow:
        await uow.tokens.remember_rotated(rotated_past, T0)
        await uow.tokens.remember_rotated(rotated_future, T0)
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.tokens.purge_expired(now) == 3
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.tokens.find(past.token_hash) is None
        assert await uow.tokens.find(at_now.token_hash) is None
        assert await uow.tokens.find(future.token_hash) == future
        assert await uow.tokens.find_rotated(rotated_past.token_hash) is None
        assert await uow.tokens.find_rotated(rotated_future.token_hash) == rotated_future
        assert await uow.tokens.purge_expired(now) == 0


async def _take_in_own_unit(storage: Storage, token_hash: str) -> RefreshToken | None:
    async with storage.begin() as uow:
        got: RefreshToken | None = await uow.tokens.take(token_hash)
        await asyncio.sleep(0.01)  # hold the unit open so the others overlap with it
        await uow.commit()
    return got


async def test_concurrent_takes_of_one_hash_have_exactly_one_winner(
    storage: Storage, make: Make
) -> None:
    user_id = await _with_user(storage, make)
    token = make.token(user_id)
    await _add_tokens(storage, token)
    results = await asyncio.gather(
        *(_take_in_own_unit(storage, token.token_hash) for _ in range(CONCURRENT_TAKES))
    )
    winners = [r for r in results if r is not None]
    assert winners == [token]


async def test_concurrent_takes_through_two_separate_stores_have_exactly_one_winner(
    storage: Storage, open_peer: StorageFactory, make: Make
) -> None:
    """Two pools (postgres) or two connections to one file (sqlite) race for one token."""
    peer = await open_peer()
    user_id = await _with_user(storage, make)
    token = make.token(user_id)
    await _add_tokens(storage, token)
    stores = [storage, peer] * (CONCURRENT_TAKES // 2)
    results = await asyncio.gather(*(_take_in_own_unit(s, token.token_hash) for s in stores))
    winners = [r for r in results if r is not None]
    assert winners == [token]
    async with peer.begin() as uow:
        assert await uow.tokens.find(token.token_hash) is None


def _take_in_fresh_process(
    kind: str, location: str, schema: str | None, token_hash: str, barrier: Any
) -> bool:
    """Run in a child process: open a store of its own, wait for the others, take once."""
    from adapters.persistence.postgres import PostgresStorage

    async def run() -> bool:
        storage: Storage = (
            SqliteStorage(location)
            if kind == "sqlite"
            else PostgresStorage(location, 1, 1, schema=schema)
        )
        await storage.open()
        try:
            barrier.wait(timeout=60)
            return await _take_in_own_unit(storage, token_hash) is not None
        finally:
            await storage.close()

    return asyncio.run(run())


@pytest.mark.slow
async def test_concurrent_takes_from_separate_processes_have_exactly_one_winner(
    storage: Storage, storage_name: str, make: Make, request: pytest.FixtureRequest
) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from tests.pg import pg_dsn

    if storage_name == "memory":
        pytest.skip("the memory store lives in one process")
    user_id = await _with_user(storage, make)
    token = make.token(user_id)
    await _add_tokens(storage, token)
    if isinstance(storage, SqliteStorage):
        location, schema = storage.path, None
    else:
        location, schema = pg_dsn() or "", request.getfixturevalue("pg_schema")
    processes = 4
    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as manager:
        barrier = manager.Barrier(processes)
        with ProcessPoolExecutor(processes, mp_context=ctx) as pool:
            futures = [
                pool.submit(
                    _take_in_fresh_process,
                    storage_name,
                    location,
                    schema,
                    token.token_hash,
                    barrier,
                )
                for _ in range(processes)
            ]
            results = await asyncio.gather(*(asyncio.wrap_future(f) for f in futures))
    assert sorted(results) == [False] * (processes - 1) + [True]
    async with storage.begin() as uow:
        assert await uow.tokens.find(token.token_hash) is None
