"""Housekeeping (contract section 12): purging expired tokens shrinks the tables, never touches a
live token or a rotated-token record still needed for reuse detection, and runs on a timer."""

from __future__ import annotations

import asyncio

import pytest

from adapters.persistence.memory import MemoryStorage
from application.auth import AuthService
from application.housekeeping import PurgeExpired
from application.settings import AuthSettings, Live
from application.tokens import hash_refresh_token as token_hash
from domain.errors import InvalidRefreshToken
from entrypoints.http.app import purge_every
from tests.fakes import FakeClock

PASSWORD = "correct horse battery"


async def _rows(storage: MemoryStorage, *tokens: str) -> tuple[list[bool], list[bool]]:
    """For each token: (is it live?, is it remembered as rotated?)."""
    async with storage.begin() as uow:
        live = [await uow.tokens.find(token_hash(t)) is not None for t in tokens]
        rotated = [await uow.tokens.find_rotated(token_hash(t)) is not None for t in tokens]
    return live, rotated


async def test_purge_removes_only_what_has_expired(
    service: AuthService,
    storage: MemoryStorage,
    clock: FakeClock,
    auth_settings: Live[AuthSettings],
) -> None:
    ttl = auth_settings.current.refresh_token_ttl
    purge = PurgeExpired(storage, clock)
    await service.register("alice@example.com", PASSWORD)
    old = await service.login("alice@example.com", PASSWORD, "10.0.0.1")
    clock.advance(ttl / 2)
    rotated_from = await service.login("alice@example.com", PASSWORD, "10.0.0.1")
    current = await service.refresh(rotated_from.refresh_token)
    assert await purge() == 0  # nothing has expired yet

    clock.advance(ttl / 2 + 1)  # `old` expired; `rotated_from` was rotated but its expiry is ahead
    assert await purge() == 2  # `old` and the record of its session, left without a live token
    live, rotated = await _rows(storage, old.refresh_token, rotated_from.refresh_token,
                                current.refresh_token)  # fmt: skip
    assert live == [False, False, True]
    assert rotated == [False, True, False]
    # The remembered record still serves reuse detection: replaying it revokes the family.
    with pytest.raises(InvalidRefreshToken):
        await service.refresh(rotated_from.refresh_token)
    assert (await _rows(storage, current.refresh_token))[0] == [False]

    clock.advance(ttl)  # now the rotated record has passed its original expiry too
    assert await purge() == 1
    assert await _rows(storage, rotated_from.refresh_token) == ([False], [False])
    assert await purge() == 0


async def test_purge_every_runs_on_its_interval_and_survives_failures() -> None:
    calls: list[int] = []

    async def purge() -> int:
        calls.append(1)
        if len(calls) == 2:
            raise ConnectionError("database away")
        return 0

    task = asyncio.create_task(purge_every(purge, 0.05))
    await asyncio.sleep(0.28)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert 4 <= len(calls) <= 6  # kept going after the failed round
