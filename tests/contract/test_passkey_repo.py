"""Contract of the PasskeyRepo port (docs/reference/mfa-and-passkeys.md) over every storage adapter:
passkeys round trip and list newest first, a credential id is registered once, updates keep the
credential, deleting a user deletes its passkeys and handle, a user handle is created once and maps
back, and a ceremony is taken once."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import attrs
import pytest

from application.ports import Storage
from domain.errors import Conflict, NotFound
from domain.model import Group
from domain.passkeys import Ceremony, CeremonyKind, Passkey
from tests.factories import T0, Make


async def _user(storage: Storage, make: Make, user_id: str = "alice") -> str:
    async with storage.begin() as uow:
        await uow.users.add(make.user(id=user_id))
        await uow.commit()
    return user_id


def _passkey(n: int, user_id: str = "alice", **changes: object) -> Passkey:
    passkey = Passkey(
        id=f"{n:032x}", user_id=user_id, credential_id=bytes([n]) * 16,
        public_key=b"\xa5\x01\x02" + bytes([n]) * 64, sign_count=0,
        aaguid="00000000-0000-0000-0000-000000000000", backup_eligible=True, backed_up=False,
        transports=("internal", "hybrid"), name=f"key {n}",
        created_at=T0 + timedelta(seconds=n, microseconds=7),
    )  # fmt: skip
    return attrs.evolve(passkey, **changes)  # type: ignore[arg-type]


async def test_passkeys_round_trip_and_list_newest_first(storage: Storage, make: Make) -> None:
    await _user(storage, make)
    await _user(storage, make, "bob")
    first, second = _passkey(1), _passkey(2, last_used_at=T0 + timedelta(hours=1))
    async with storage.begin() as uow:
        for passkey in (first, second, _passkey(3, "bob")):
            await uow.passkeys.add(passkey)
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.passkeys.get(first.id) == first
        assert await uow.passkeys.by_credential_id(second.credential_id) == second
        assert await uow.passkeys.by_credential_id(b"unknown") is None
        assert [p.id for p in await uow.passkeys.list_for_user("alice")] == [second.id, first.id]
        assert await uow.passkeys.list_for_user("nobody") == []


async def test_a_credential_id_is_registered_once(storage: Storage, make: Make) -> None:
    await _user(storage, make)
    await _user(storage, make, "bob")
    async with storage.begin() as uow:
        await uow.passkeys.add(_passkey(1))
        await uow.commit()
    async with storage.begin() as uow:
        with pytest.raises(Conflict):
            await uow.passkeys.add(_passkey(2, "bob", credential_id=_passkey(1).credential_id))
    async with storage.begin() as uow:
        with pytest.raises(NotFound):
            await uow.passkeys.add(_passkey(3, "ghost"))


async def test_update_changes_the_counter_name_and_flags(storage: Storage, make: Make) -> None:
    await _user(storage, make)
    async with storage.begin() as uow:
        await uow.passkeys.add(_passkey(1))
        await uow.commit()
    used = _passkey(1, sign_count=7, backed_up=True, name="laptop", suspected_clone=True,
                    last_used_at=T0 + timedelta(days=1, microseconds=3))  # fmt: skip
    async with storage.begin() as uow:
        await uow.passkeys.update(used)
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.passkeys.get(used.id) == used
        with pytest.raises(NotFound):
            await uow.passkeys.update(_passkey(9))
        assert await uow.passkeys.delete(used.id) is True
        assert await uow.passkeys.delete(used.id) is False


async def test_a_use_is_recorded_by_compare_and_set_on_the_counter(
    storage: Storage, make: Make
) -> None:
    """Two uses read at one counter: exactly one is stored (UPDATE ... WHERE sign_count = old);
    a flagged or unknown passkey records none. Only the counter, backup state and last use
    change (the name and flags given are ignored)."""
    await _user(storage, make)
    async with storage.begin() as uow:
        await uow.passkeys.add(_passkey(1, sign_count=4, name="laptop"))
        await uow.passkeys.add(_passkey(2, suspected_clone=True))
        await uow.commit()
    used_at = T0 + timedelta(days=1, microseconds=3)

    async def use(new_count: int) -> bool:
        async with storage.begin() as uow:
            used = _passkey(1, sign_count=new_count, backed_up=True, last_used_at=used_at,
                        name="ignored", suspected_clone=True)  # fmt: skip
            stored = await uow.passkeys.record_use(used, 4)
            await uow.commit()
            return stored

    results = await asyncio.gather(use(5), use(6))
    assert sorted(results) == [False, True]
    won = 5 if results[0] else 6
    async with storage.begin() as uow:
        assert await uow.passkeys.get(_passkey(1).id) == _passkey(
            1, sign_count=won, name="laptop", backed_up=True, last_used_at=used_at
        )
        assert not await uow.passkeys.record_use(_passkey(1, sign_count=9), 4)  # stale
        assert not await uow.passkeys.record_use(_passkey(2, sign_count=1), 0)  # flagged
        assert not await uow.passkeys.record_use(_passkey(9, sign_count=1), 0)  # unknown
        assert await uow.passkeys.record_use(_passkey(1, sign_count=won), won)  # same counter
    async with storage.begin() as uow:
        assert await uow.passkeys.get(_passkey(2).id) == _passkey(2, suspected_clone=True)


async def test_deleting_a_user_deletes_its_passkeys_and_handle(
    storage: Storage, make: Make
) -> None:
    await _user(storage, make)
    async with storage.begin() as uow:
        await uow.passkeys.add(_passkey(1))
        assert await uow.passkeys.user_handle("alice", b"h" * 32) == b"h" * 32
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.users.delete("alice")
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.passkeys.get(_passkey(1).id) is None
        assert await uow.passkeys.user_for_handle(b"h" * 32) is None


async def test_a_user_handle_is_created_once(storage: Storage, make: Make) -> None:
    await _user(storage, make)
    async with storage.begin() as uow:
        assert await uow.passkeys.user_handle("alice", b"a" * 32) == b"a" * 32
        assert await uow.passkeys.user_handle("alice", b"b" * 32) == b"a" * 32
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.passkeys.user_for_handle(b"a" * 32) == "alice"
        assert await uow.passkeys.user_for_handle(b"b" * 32) is None
        with pytest.raises(NotFound):
            await uow.passkeys.user_handle("ghost", b"c" * 32)


def _ceremony(n: int, ttl: int = 300) -> Ceremony:
    return Ceremony(f"c{n}", CeremonyKind.AUTHENTICATION, bytes([n]) * 32, None, "m" * 64,
                    T0, T0 + timedelta(seconds=ttl))  # fmt: skip


async def test_a_ceremony_is_taken_once_and_purged_when_expired(storage: Storage) -> None:
    async with storage.begin() as uow:
        await uow.passkeys.put_ceremony(_ceremony(1))
        await uow.passkeys.put_ceremony(_ceremony(2, ttl=10))
        with pytest.raises(Conflict):
            await uow.passkeys.put_ceremony(_ceremony(1))
        await uow.commit()

    async def take() -> Ceremony | None:
        async with storage.begin() as uow:
            taken = await uow.passkeys.take_ceremony("c1")
            await uow.commit()
            return taken

    results = await asyncio.gather(take(), take(), take())
    assert [r for r in results if r is not None] == [_ceremony(1)]
    async with storage.begin() as uow:
        assert await uow.passkeys.purge_expired(T0 + timedelta(seconds=10)) == 1
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.passkeys.take_ceremony("c2") is None


async def test_a_user_is_read_with_its_passkey_count(storage: Storage, make: Make) -> None:
    await _user(storage, make)
    async with storage.begin() as uow:
        await uow.passkeys.add(_passkey(1))
        await uow.passkeys.add(_passkey(2))
        await uow.groups.add(Group("g1", "team", "org-a", T0))
        await uow.groups.add_member("g1", "alice", T0)
        await uow.commit()
    async with storage.begin() as uow:
        user = await uow.users.get("alice")
        assert user is not None and user.passkeys == 2
        by_email = await uow.users.get_by_email(user.email)
        assert by_email is not None and by_email.passkeys == 2
        with_groups = await uow.users.get_with_groups("alice")
        assert with_groups is not None and with_groups[0].passkeys == 2
        assert [u.passkeys for u in await uow.users.list_page(None, None, 10)] == [2]
        assert [u.passkeys for u in await uow.groups.members("g1")] == [2]
        await uow.users.update(user)  # the count is read, never written
        await uow.passkeys.delete(_passkey(1).id)
        assert (await uow.users.get("alice")).passkeys == 1  # type: ignore[union-attr]


async def test_credential_id_lengths_are_sampled(storage: Storage, make: Make) -> None:
    """The decoys' length distribution (docs/reference/mfa-and-passkeys.md): the byte lengths of up
    to ``limit`` stored credential ids."""
    await _user(storage, make)
    async with storage.begin() as uow:
        assert await uow.passkeys.credential_id_lengths(10) == []
        await uow.passkeys.add(_passkey(1))
        await uow.passkeys.add(_passkey(2, credential_id=bytes([2]) * 32))
        await uow.passkeys.add(_passkey(3, credential_id=bytes([3]) * 64))
        await uow.commit()
    async with storage.read() as uow:
        assert sorted(await uow.passkeys.credential_id_lengths(10)) == [16, 32, 64]
        assert len(await uow.passkeys.credential_id_lengths(2)) == 2
