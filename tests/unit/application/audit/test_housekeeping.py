"""Housekeeping (docs/reference/operations.md): purging expired tokens shrinks the tables, never
touches a live token or a rotated-token record still needed for reuse detection, purges the
provider's expired codes and hosted sessions, and runs on a timer."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import attrs
import pytest

from adapters.persistence.memory import MemoryStorage
from application.audit.housekeeping import PurgeExpired
from application.login.auth import AuthService
from application.sessions.tokens import hash_refresh_token as token_hash
from application.shared.settings import AuthSettings, Live
from domain.clients import Client
from domain.errors import InvalidRefreshToken
from domain.oidc import AuthorizationCode, HostedSession
from entrypoints.http.app import purge_every
from tests.factories import Make
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


async def test_purge_removes_expired_codes_and_hosted_sessions(
    storage: MemoryStorage, clock: FakeClock
) -> None:
    """The provider's rows (docs/reference/oauth-and-oidc.md): an authorization code past
    ``expires_at`` and a hosted session past its idle end go, with the ``sessions`` row it alone
    kept alive; a live code, a live hosted session and its row stay."""
    make, t0 = Make(), clock.now()
    client = Client("c" * 32, "app", "org-a", ("openid",), (), False, False, t0, "")
    stale_row, live_row = make.session("alice"), make.session("alice")
    stale = HostedSession("1" * 64, stale_row.id, "alice", t0, ("pwd",), "1",
                          t0 + timedelta(hours=1), t0 + timedelta(days=30))  # fmt: skip
    live = attrs.evolve(stale, id_hash="2" * 64, session_id=live_row.id,
                        idle_expires_at=t0 + timedelta(hours=8))  # fmt: skip
    code = AuthorizationCode("3" * 64, client.id, "alice", "https://app.example/cb", "x" * 43,
                             None, ("openid",), live_row.id, t0, ("pwd",), "1", t0,
                             t0 + timedelta(minutes=1))  # fmt: skip
    later_code = attrs.evolve(code, code_hash="4" * 64, expires_at=t0 + timedelta(hours=3))
    async with storage.begin() as uow:
        await uow.users.add(make.user(id="alice"))
        await uow.clients.add(client)
        for row, hosted in ((stale_row, stale), (live_row, live)):
            await uow.sessions.add(attrs.evolve(row, expires_at=t0 + timedelta(days=30)))
            await uow.hosted_sessions.add(hosted)
        await uow.codes.add(code)
        await uow.codes.add(later_code)
        await uow.commit()
    clock.advance(2 * 3600)
    assert await PurgeExpired(storage, clock)() == 3  # the stale hosted session, its row, a code
    async with storage.begin() as uow:
        assert await uow.hosted_sessions.find(live.id_hash, clock.now()) == live
        assert await uow.sessions.get(stale_row.id) is None
        assert await uow.codes.take(code.code_hash, clock.now()) is None
        assert await uow.codes.take(later_code.code_hash, clock.now()) is not None
