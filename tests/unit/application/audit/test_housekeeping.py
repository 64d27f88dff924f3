"""Housekeeping (contract section 12): purging expired tokens shrinks the tables, never touches a
live token or a rotated-token record still needed for reuse detection, and runs on a timer."""

from __future__ import annotations

import asyncio

import pytest

from adapters.persistence.memory import MemoryStorage
from application.audit.housekeeping import PurgeExpired
from application.login.auth import AuthService
from application.login.tokens import hash_refresh_token as token_hash
from application.shared.settings import AuthSettings, Live
from domain.errors import InvalidRefreshToken
from entrypoints.http.app import purge_every
from tests.contract.conftest import Make
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


class _FailingOnBegin(MemoryStorage):
    """A MemoryStorage whose ``begin()`` number ``fail_at`` raises (the database went away)."""

    def __init__(self, fail_at: int) -> None:
        super().__init__()
        self.begun = 0
        self._fail_at = fail_at

    def begin(self):  # type: ignore[no-untyped-def]
        self.begun += 1
        if self.begun == self._fail_at:
            raise ConnectionError("database away")
        return super().begin()


async def test_each_purge_batch_commits_on_its_own(clock: FakeClock) -> None:
    """A backlog is purged one committed transaction per batch: when the third batch fails,
    what the first two deleted stays deleted (one unbatched transaction would keep nothing)."""
    storage = _FailingOnBegin(fail_at=3 + 1)  # 1: the setup; 2, 3: two batches; 4 fails
    make = Make()
    async with storage.begin() as uow:
        await uow.users.add(make.user(id="owner"))
        for n in range(10):
            await uow.tokens.add(
                make.token("owner", expires_at=clock.now(), token_hash=f"{n:064x}")
            )
        await uow.commit()
    clock.advance(3600)
    with pytest.raises(ConnectionError):
        await PurgeExpired(storage, clock, batch=4)()
    async with storage.read() as uow:
        left = [n for n in range(10) if await uow.tokens.find(f"{n:064x}") is not None]
    assert len(left) == 10 - 2 * 4
