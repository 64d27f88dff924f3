"""Housekeeping's bounded batches (contract section 12; issue 35), over every storage adapter: a
purge with a ``limit`` deletes at most that many rows of each table, only expired ones, and the
rest on the next call; ``PurgeExpired`` drains a backlog larger than its batch, one committed
transaction per batch."""

from __future__ import annotations

from datetime import timedelta

from application.audit.housekeeping import PurgeExpired
from application.ports import Storage
from application.shared.settings import AuditSettings, Live
from domain.audit import AuditEvent, new_audit_id
from tests.contract.conftest import T0, Make
from tests.fakes import FakeClock

NOW = T0 + timedelta(hours=1)


async def _expired_and_live_tokens(storage: Storage, make: Make, expired: int) -> str:
    """``expired`` expired live tokens and as many expired rotated records, plus one live token
    that must survive; returns the survivor's hash."""
    async with storage.begin() as uow:
        await uow.users.add(make.user(id="owner"))
        for _ in range(expired):
            await uow.tokens.add(make.token("owner", expires_at=NOW - timedelta(seconds=1)))
            await uow.tokens.remember_rotated(
                make.token("owner", expires_at=NOW - timedelta(seconds=1)), T0
            )
        survivor = make.token("owner", expires_at=NOW + timedelta(seconds=1))
        await uow.tokens.add(survivor)
        await uow.commit()
    return survivor.token_hash


async def test_a_limited_token_purge_deletes_at_most_the_limit_of_each_table(
    storage: Storage, make: Make
) -> None:
    survivor = await _expired_and_live_tokens(storage, make, expired=5)
    deleted = []
    for _ in range(4):
        async with storage.begin() as uow:
            deleted.append(await uow.tokens.purge_expired(NOW, 2))
            await uow.commit()
    assert deleted == [4, 4, 2, 0]  # two live + two rotated per call, then the remainder
    async with storage.read() as uow:
        assert await uow.tokens.find(survivor) is not None


async def test_a_limited_session_purge_keeps_live_sessions(storage: Storage, make: Make) -> None:
    async with storage.begin() as uow:
        await uow.users.add(make.user(id="alice"))
        live = make.session("alice")
        await uow.sessions.add(live)
        await uow.tokens.add(make.token("alice", live.id, expires_at=NOW + timedelta(1)))
        for _ in range(3):
            await uow.sessions.add(make.session("alice"))  # no live token: ended
        await uow.commit()
    counts = []
    for _ in range(3):
        async with storage.begin() as uow:
            counts.append(await uow.sessions.purge_expired(NOW, 2))
            await uow.commit()
    assert counts == [2, 1, 0]
    async with storage.read() as uow:
        assert await uow.sessions.get(live.id) == live


async def test_a_limited_audit_purge_deletes_the_oldest_rows_only(storage: Storage) -> None:
    async with storage.begin() as uow:
        for second in range(5):
            when = T0 + timedelta(seconds=second)
            await uow.audit.record(
                AuditEvent(
                    new_audit_id(when), "login.failed", when, None, None, "org-a", None, None, {}
                )
            )
        await uow.commit()
    cutoff = T0 + timedelta(seconds=3)  # rows at 0, 1, 2 are older
    async with storage.begin() as uow:
        assert await uow.audit.purge_before(cutoff, 2) == 2
        assert await uow.audit.purge_before(cutoff, 2) == 1
        assert await uow.audit.purge_before(cutoff, 2) == 0
        await uow.commit()


async def test_housekeeping_drains_a_backlog_larger_than_its_batch(
    storage: Storage, make: Make
) -> None:
    survivor = await _expired_and_live_tokens(storage, make, expired=7)
    clock = FakeClock(NOW)
    purge = PurgeExpired(storage, clock, Live(AuditSettings()), batch=3)
    assert await purge() == 14  # seven live and seven rotated, in batches of three per table
    async with storage.read() as uow:
        assert await uow.tokens.find(survivor) is not None
    assert await purge() == 0
