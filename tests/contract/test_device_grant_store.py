"""Contract of ``DeviceGrantStore`` (RFC 8628; docs/reference/oauth-and-oidc.md) over every storage
adapter: a grant round trips, is found by its user code only while pending and unexpired, records
polls, takes one decision, is taken (its tokens issued) exactly once under concurrency, goes with
its client or its user, and is purged after its expiry."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import attrs
import pytest

from application.ports import Storage
from domain.clients import Client
from domain.device import DeviceGrant, DeviceStatus
from domain.errors import Conflict, NotFound
from tests.factories import T0, Make, StorageFactory

CLIENT = "c" * 32
CONCURRENT_TAKES = 8


def _grant(device_hash: str = "d" * 64, user_hash: str = "u" * 64, **kw: object) -> DeviceGrant:
    grant = DeviceGrant(
        device_code_hash=device_hash,
        user_code_hash=user_hash,
        client_id=CLIENT,
        scopes=("openid", "offline_access"),
        created_at=T0,
        expires_at=T0 + timedelta(seconds=600),
    )
    return attrs.evolve(grant, **kw)  # type: ignore[arg-type]


def _approved(grant: DeviceGrant, user_id: str, status: DeviceStatus) -> DeviceGrant:
    return attrs.evolve(
        grant, status=status, user_id=user_id, session_id="s-1",
        auth_time=T0 + timedelta(seconds=7, microseconds=3), amr=("pwd", "otp", "mfa"), acr="2",
        decided_at=T0 + timedelta(seconds=9),
    )  # fmt: skip


async def _setup(storage: Storage, make: Make, *grants: DeviceGrant) -> None:
    async with storage.begin() as uow:
        await uow.users.add(make.user(id="alice"))
        client = Client(
            CLIENT, "tv", "org-a", ("read",), ("aud",), False, False, T0, "",
            grant_types=("urn:ietf:params:oauth:grant-type:device_code",), public=True,
            token_endpoint_auth_method="none",
        )  # fmt: skip
        await uow.clients.add(client)
        for grant in grants:
            await uow.device_grants.add(grant)
        await uow.commit()


async def test_a_grant_round_trips_and_is_found_by_its_user_code(
    storage: Storage, make: Make
) -> None:
    grant = _grant()
    await _setup(storage, make, grant)
    async with storage.begin() as uow:
        assert await uow.device_grants.get(grant.device_code_hash) == grant
        assert await uow.device_grants.get("e" * 64) is None
    async with storage.read() as uow:
        assert await uow.device_grants.find_by_user_code(grant.user_code_hash, T0) == grant
        assert await uow.device_grants.find_by_user_code("v" * 64, T0) is None
        late = grant.expires_at
        assert await uow.device_grants.find_by_user_code(grant.user_code_hash, late) is None


async def test_a_hash_twice_is_a_conflict_and_an_unknown_client_not_found(
    storage: Storage, make: Make
) -> None:
    await _setup(storage, make, _grant())
    for twin in (_grant(user_hash="v" * 64), _grant(device_hash="e" * 64)):
        async with storage.begin() as uow:
            with pytest.raises(Conflict):
                await uow.device_grants.add(twin)
    async with storage.begin() as uow:
        with pytest.raises(NotFound):
            await uow.device_grants.add(_grant("e" * 64, "v" * 64, client_id="f" * 32))


async def test_a_poll_is_recorded(storage: Storage, make: Make) -> None:
    grant = _grant()
    await _setup(storage, make, grant)
    at = T0 + timedelta(seconds=3, microseconds=1)
    async with storage.begin() as uow:
        await uow.device_grants.record_poll(grant.device_code_hash, at, 10)
        await uow.device_grants.record_poll("e" * 64, at, 10)  # gone: nothing
        await uow.commit()
    async with storage.begin() as uow:
        found = await uow.device_grants.get(grant.device_code_hash)
    assert found == attrs.evolve(grant, last_polled_at=at, interval=10)


async def test_one_decision_is_stored_and_the_user_code_then_finds_nothing(
    storage: Storage, make: Make
) -> None:
    grant = _grant()
    await _setup(storage, make, grant)
    approved = _approved(grant, "alice", DeviceStatus.APPROVED)
    async with storage.begin() as uow:
        assert await uow.device_grants.decide(approved, T0)
        assert not await uow.device_grants.decide(
            _approved(grant, "alice", DeviceStatus.DENIED), T0
        )
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.device_grants.get(grant.device_code_hash) == approved
        assert await uow.device_grants.find_by_user_code(grant.user_code_hash, T0) is None


async def test_an_expired_grant_takes_no_decision(storage: Storage, make: Make) -> None:
    grant = _grant()
    await _setup(storage, make, grant)
    async with storage.begin() as uow:
        decided = _approved(grant, "alice", DeviceStatus.APPROVED)
        assert not await uow.device_grants.decide(decided, grant.expires_at)
        await uow.commit()
    async with storage.begin() as uow:
        found = await uow.device_grants.get(grant.device_code_hash)
    assert found is not None and found.status is DeviceStatus.PENDING


async def test_only_an_approved_grant_is_taken_and_only_once(storage: Storage, make: Make) -> None:
    pending, denied = _grant(), _grant("e" * 64, "v" * 64)
    await _setup(storage, make, pending, denied)
    async with storage.begin() as uow:
        assert not await uow.device_grants.take(pending.device_code_hash)
        await uow.device_grants.decide(_approved(denied, "alice", DeviceStatus.DENIED), T0)
        assert not await uow.device_grants.take(denied.device_code_hash)
        await uow.device_grants.decide(_approved(pending, "alice", DeviceStatus.APPROVED), T0)
        assert await uow.device_grants.take(pending.device_code_hash)
        assert not await uow.device_grants.take(pending.device_code_hash)
        await uow.commit()
    async with storage.begin() as uow:
        found = await uow.device_grants.get(pending.device_code_hash)
    assert found is not None and found.status is DeviceStatus.USED


async def test_concurrent_takes_issue_once(
    storage: Storage, open_peer: StorageFactory, make: Make
) -> None:
    """Two pools (postgres) or two connections to one file (sqlite) race for one grant."""
    peer = await open_peer()
    grant = _grant()
    await _setup(storage, make, grant)
    async with storage.begin() as uow:
        await uow.device_grants.decide(_approved(grant, "alice", DeviceStatus.APPROVED), T0)
        await uow.commit()

    async def take(store: Storage) -> bool:
        async with store.begin() as uow:
            won = await uow.device_grants.take(grant.device_code_hash)
            await asyncio.sleep(0.01)
            await uow.commit()
        return won

    results = await asyncio.gather(*(take(s) for s in [storage, peer] * (CONCURRENT_TAKES // 2)))
    assert sum(results) == 1


async def test_a_grant_goes_with_its_client_and_with_the_user_who_decided(
    storage: Storage, make: Make
) -> None:
    first, second = _grant(), _grant("e" * 64, "v" * 64)
    await _setup(storage, make, first, second)
    async with storage.begin() as uow:
        await uow.device_grants.decide(_approved(first, "alice", DeviceStatus.APPROVED), T0)
        assert await uow.users.delete("alice")
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.device_grants.get(first.device_code_hash) is None
        assert await uow.device_grants.get(second.device_code_hash) is not None
        assert await uow.clients.delete(CLIENT)
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.device_grants.get(second.device_code_hash) is None


async def test_expired_grants_are_purged(storage: Storage, make: Make) -> None:
    live = _grant()
    old = _grant("e" * 64, "v" * 64, expires_at=T0 + timedelta(seconds=10))
    await _setup(storage, make, live, old)
    async with storage.begin() as uow:
        assert await uow.device_grants.purge_expired(T0 + timedelta(seconds=10)) == 1
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.device_grants.get(old.device_code_hash) is None
        assert await uow.device_grants.get(live.device_code_hash) == live
