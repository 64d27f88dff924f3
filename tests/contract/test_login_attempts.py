"""Contract of the LoginAttempts port, over every storage adapter."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

import pytest

from adapters.persistence.memory import MemoryLoginAttempts
from adapters.persistence.postgres import PostgresStorage
from adapters.persistence.sqlite import SqliteStorage
from application.ports import AttemptClaim, LoginAttempts, Storage
from tests.factories import T0, StorageFactory, counted, record


async def test_no_records_for_an_unknown_key(login_attempts: LoginAttempts) -> None:
    assert await counted(login_attempts, "a@example.com|1.2.3.4", T0) == []


async def test_counted_records_are_inclusive_and_oldest_first(
    login_attempts: LoginAttempts,
) -> None:
    key = "a@example.com|1.2.3.4"
    times = [T0 + timedelta(seconds=s, microseconds=3) for s in (30, 10, 20)]
    for t in times:
        await record(login_attempts, key, t)
    got = await counted(login_attempts, key, times[1])  # exactly the oldest: included
    assert got == sorted(times)
    assert all(t.utcoffset() == timedelta(0) for t in got)
    later = await counted(login_attempts, key, T0 + timedelta(seconds=15))
    assert later == sorted(times)[1:]


async def test_keys_are_independent(login_attempts: LoginAttempts) -> None:
    await record(login_attempts, "a|1.1.1.1", T0)
    await record(login_attempts, "a|2.2.2.2", T0)
    await record(login_attempts, "a|2.2.2.2", T0 + timedelta(seconds=1))
    assert len(await counted(login_attempts, "a|1.1.1.1", T0)) == 1
    assert len(await counted(login_attempts, "a|2.2.2.2", T0)) == 2


async def test_reset_forgets_only_that_key(login_attempts: LoginAttempts) -> None:
    await record(login_attempts, "k1", T0)
    await record(login_attempts, "k2", T0)
    await login_attempts.reset("k1")
    await login_attempts.reset("never-seen")
    assert await counted(login_attempts, "k1", T0) == []
    assert await counted(login_attempts, "k2", T0) == [T0]


async def test_same_instant_records_are_all_counted(login_attempts: LoginAttempts) -> None:
    for _ in range(3):
        await record(login_attempts, "k", T0)
    assert await counted(login_attempts, "k", T0) == [T0, T0, T0]


WINDOW = timedelta(seconds=900)


async def _claim(attempts: LoginAttempts, key: str, at: datetime, limit: int = 3) -> AttemptClaim:
    return await attempts.claim(key, at, at - WINDOW, limit)


async def test_claim_records_until_the_limit_then_refuses_without_recording(
    login_attempts: LoginAttempts,
) -> None:
    times = [T0 + timedelta(seconds=s) for s in (1, 2, 3)]
    ids = []
    for n, t in enumerate(times, start=1):
        claimed = await _claim(login_attempts, "k", t)
        assert claimed.admitted and claimed.attempt_id is not None
        assert claimed.counted == tuple(times[:n])
        ids.append(claimed.attempt_id)
    assert len(set(ids)) == 3
    refused = await _claim(login_attempts, "k", T0 + timedelta(seconds=4))
    assert not refused.admitted and refused.attempt_id is None
    assert refused.counted == tuple(times)  # for Retry-After: the oldest leaves first
    assert await counted(login_attempts, "k", T0) == times  # nothing more recorded


async def test_claim_counts_only_the_window_and_earlier_records(
    login_attempts: LoginAttempts,
) -> None:
    await record(login_attempts, "k", T0)
    await record(login_attempts, "k", T0 + timedelta(seconds=1))
    later = T0 + WINDOW + timedelta(microseconds=1)  # T0 has left the window
    claimed = await _claim(login_attempts, "k", later)
    assert claimed.admitted and claimed.counted == (T0 + timedelta(seconds=1), later)
    assert (await _claim(login_attempts, "k", later)).admitted  # the third in the window
    assert not (await _claim(login_attempts, "k", later)).admitted
    assert (await _claim(login_attempts, "other", later)).admitted  # keys are independent


async def test_release_forgets_one_attempt_and_reset_every_one(
    login_attempts: LoginAttempts,
) -> None:
    first = await _claim(login_attempts, "k", T0)
    second = await _claim(login_attempts, "k", T0 + timedelta(seconds=1))
    assert first.attempt_id is not None and second.attempt_id is not None
    await login_attempts.release("k", first.attempt_id)
    await login_attempts.release("other", second.attempt_id)  # another key's id: no change
    assert await counted(login_attempts, "k", T0) == [T0 + timedelta(seconds=1)]
    await login_attempts.reset("k")
    await login_attempts.release("k", second.attempt_id)  # gone already: nothing happens
    assert await counted(login_attempts, "k", T0) == []


async def test_claim_refuses_a_naive_time(login_attempts: LoginAttempts) -> None:
    with pytest.raises(ValueError):
        await login_attempts.claim("k", datetime(2026, 1, 1), T0, 3)


async def test_of_many_concurrent_claims_through_two_stores_at_most_the_limit_win(
    store: tuple[str, Storage, StorageFactory],
) -> None:
    """Count first, then check (docs/reference/mfa-and-passkeys.md): 40 claims at once on one key,
    half through another store (another SQLite connection on the file, another PostgreSQL pool),
    admit exactly the limit."""
    name, storage, open_peer = store
    peer = await open_peer()
    stores = [_attempts_of(storage), _attempts_of(peer)]
    if name == "memory":
        stores = [stores[0], stores[0]]  # one process, one store
    results = await asyncio.gather(
        *(_claim(stores[n % 2], "k", T0 + timedelta(microseconds=n), limit=5) for n in range(40))
    )
    assert sum(r.admitted for r in results) == 5
    assert len(await counted(stores[1], "k", T0)) == 5


def _attempts_of(storage: Storage) -> LoginAttempts:
    if isinstance(storage, SqliteStorage | PostgresStorage):
        return storage.login_attempts()
    return MemoryLoginAttempts()
