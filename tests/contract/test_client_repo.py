"""Contract of the ClientRepo port (docs/reference/oauth-and-oidc.md) over every storage adapter:
clients round trip (times to the microsecond, scopes and audiences in order, the previous secret's
grace), updates replace every field, keyset pages per organization, rollback drops changes, and
revocations are idempotent, seen at once and purged after the token's expiry."""

from __future__ import annotations

from datetime import timedelta

import attrs
import pytest

from application.ports import Storage
from domain.clients import Client
from domain.errors import Conflict, NotFound
from tests.factories import T0


def _client(n: int, org_id: str = "org-a", **changes: object) -> Client:
    client = Client(
        id=f"{n:032x}",
        name=f"client {n}",
        org_id=org_id,
        scopes=("read:users", "write:groups"),
        audience=("https://api.example.com", "billing"),
        require_dpop=False,
        disabled=False,
        created_at=T0,
        secret_hash="a" * 64,
    )
    return attrs.evolve(client, **changes)  # type: ignore[arg-type]


async def _add(storage: Storage, *clients: Client) -> None:
    async with storage.begin() as uow:
        for client in clients:
            await uow.clients.add(client)
        await uow.commit()


async def _get(storage: Storage, client_id: str) -> Client | None:
    async with storage.begin() as uow:
        return await uow.clients.get(client_id)


async def test_a_client_round_trips(storage: Storage) -> None:
    plain = _client(1)
    rotated = _client(
        2,
        scopes=(),
        audience=("z", "a"),
        require_dpop=True,
        disabled=True,
        secret_rotated_at=T0 + timedelta(seconds=1, microseconds=7),
        previous_secret_hash="b" * 64,
        previous_secret_expires_at=T0 + timedelta(minutes=5),
    )
    await _add(storage, plain, rotated)
    assert await _get(storage, plain.id) == plain
    assert await _get(storage, rotated.id) == rotated
    assert await _get(storage, _client(3).id) is None


async def test_the_id_is_unique(storage: Storage) -> None:
    await _add(storage, _client(1))
    with pytest.raises(Conflict):
        await _add(storage, _client(1, org_id="org-b"))
    assert (await _get(storage, _client(1).id)) == _client(1)


async def test_update_replaces_every_field_and_needs_the_client(storage: Storage) -> None:
    await _add(storage, _client(1))
    changed = _client(
        1,
        name="renamed",
        scopes=("only",),
        audience=("elsewhere",),
        require_dpop=True,
        disabled=True,
        secret_hash="c" * 64,
        secret_rotated_at=T0 + timedelta(hours=1),
        previous_secret_hash="a" * 64,
        previous_secret_expires_at=T0 + timedelta(hours=2),
    )
    async with storage.begin() as uow:
        await uow.clients.update(changed)
        await uow.commit()
    assert await _get(storage, changed.id) == changed
    async with storage.begin() as uow:
        with pytest.raises(NotFound):
            await uow.clients.update(_client(9))


async def test_delete(storage: Storage) -> None:
    await _add(storage, _client(1), _client(2))
    async with storage.begin() as uow:
        assert await uow.clients.delete(_client(1).id) is True
        assert await uow.clients.delete(_client(1).id) is False
        await uow.commit()
    assert await _get(storage, _client(1).id) is None
    assert await _get(storage, _client(2).id) == _client(2)


async def test_pages_by_id_per_organization(storage: Storage) -> None:
    await _add(storage, *(_client(n, "org-a" if n % 2 else "org-b") for n in range(1, 8)))
    async with storage.begin() as uow:
        every = await uow.clients.list_page(None, None, 100)
        first = await uow.clients.list_page("org-a", None, 2)
        rest = await uow.clients.list_page("org-a", first[-1].id, 100)
        none = await uow.clients.list_page("org-c", None, 100)
    assert [c.id for c in every] == [_client(n).id for n in range(1, 8)]
    assert [c.id for c in first + rest] == [_client(n).id for n in (1, 3, 5, 7)]
    assert len(first) == 2 and none == []


async def test_a_rollback_drops_the_changes(storage: Storage) -> None:
    await _add(storage, _client(1))
    async with storage.begin() as uow:
        await uow.clients.add(_client(2))
        await uow.clients.update(_client(1, name="changed"))
        await uow.clients.revoke("jti-1", _client(1).id, T0)
    assert await _get(storage, _client(2).id) is None
    assert await _get(storage, _client(1).id) == _client(1)
    async with storage.begin() as uow:
        assert await uow.clients.is_revoked("jti-1") is False


async def test_revocations_are_idempotent_and_purged_after_the_expiry(storage: Storage) -> None:
    async with storage.begin() as uow:
        await uow.clients.revoke("jti-1", _client(1).id, T0 + timedelta(seconds=10))
        await uow.clients.revoke("jti-1", _client(1).id, T0 + timedelta(seconds=10))
        await uow.clients.revoke("jti-2", _client(2).id, T0 + timedelta(seconds=20))
        assert await uow.clients.is_revoked("jti-1") is True  # seen in its own unit
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.clients.is_revoked("jti-2") is True
        assert await uow.clients.is_revoked("jti-3") is False
        assert await uow.clients.purge_revoked(T0 + timedelta(seconds=10)) == 1
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.clients.is_revoked("jti-1") is False
        assert await uow.clients.is_revoked("jti-2") is True


async def test_a_proof_id_is_claimed_once_until_purged(storage: Storage) -> None:
    async with storage.begin() as uow:
        assert await uow.clients.claim_proof_jti("p-1", T0 + timedelta(seconds=60)) is True
        assert await uow.clients.claim_proof_jti("p-1", T0 + timedelta(seconds=60)) is False
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.clients.claim_proof_jti("p-1", T0 + timedelta(seconds=90)) is False
        assert await uow.clients.purge_revoked(T0 + timedelta(seconds=60)) == 1
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.clients.claim_proof_jti("p-1", T0 + timedelta(seconds=120)) is True
