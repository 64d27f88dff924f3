"""Contract of the EmailTokenStore port (docs/reference/accounts.md) over every storage adapter:
hashes only, single use under concurrency (in one store and across two), voiding, purging,
and the cascade when the user goes."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import attrs
import pytest

from application.ports import Storage
from application.shared.steps import hash_token
from domain.errors import Conflict, NotFound
from domain.model import EmailToken, EmailTokenPurpose
from tests.factories import T0, Make, StorageFactory

RESET, VERIFY = EmailTokenPurpose.RESET, EmailTokenPurpose.VERIFY


def _token(
    user_id: str, clear: str, purpose: EmailTokenPurpose = RESET, ttl: int = 1800
) -> EmailToken:
    return EmailToken(hash_token(clear), user_id, purpose, T0 + timedelta(seconds=ttl), T0)


async def _user(storage: Storage, make: Make, user_id: str = "alice") -> str:
    async with storage.begin() as uow:
        await uow.users.add(make.user(id=user_id))
        await uow.commit()
    return user_id


async def _add(storage: Storage, *tokens: EmailToken) -> None:
    async with storage.begin() as uow:
        for token in tokens:
            await uow.email_tokens.add(token)
        await uow.commit()


async def test_add_then_find_round_trips_by_hash_and_purpose(storage: Storage, make: Make) -> None:
    alice = await _user(storage, make)
    token = _token(alice, "clear-1")
    await _add(storage, token)
    async with storage.begin() as uow:
        assert await uow.email_tokens.find(token.token_hash, RESET) == token
        assert await uow.email_tokens.find(token.token_hash, VERIFY) is None
        assert await uow.email_tokens.find(hash_token("other"), RESET) is None


async def test_an_email_change_token_carries_its_new_address(storage: Storage, make: Make) -> None:
    alice = await _user(storage, make)
    change = EmailTokenPurpose.EMAIL_CHANGE
    token = attrs.evolve(_token(alice, "clear-2", change), new_email="alice@new.example")
    await _add(storage, token)
    async with storage.begin() as uow:
        assert await uow.email_tokens.find(token.token_hash, change) == token
        assert await uow.email_tokens.find(token.token_hash, RESET) is None
        assert await uow.email_tokens.take(token.token_hash, change) == token
        await uow.commit()


async def test_add_refuses_an_unknown_user_and_a_duplicate_hash(
    storage: Storage, make: Make
) -> None:
    alice = await _user(storage, make)
    token = _token(alice, "clear-1")
    await _add(storage, token)
    async with storage.begin() as uow:
        with pytest.raises(NotFound):
            await uow.email_tokens.add(_token("ghost", "clear-2"))
    async with storage.begin() as uow:
        with pytest.raises(Conflict):
            await uow.email_tokens.add(token)


async def test_take_spends_the_token_once(storage: Storage, make: Make) -> None:
    alice = await _user(storage, make)
    token = _token(alice, "clear-1", VERIFY)
    await _add(storage, token)
    async with storage.begin() as uow:
        assert await uow.email_tokens.take(token.token_hash, RESET) is None  # wrong purpose
        assert await uow.email_tokens.take(token.token_hash, VERIFY) == token
        assert await uow.email_tokens.take(token.token_hash, VERIFY) is None
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.email_tokens.find(token.token_hash, VERIFY) is None


async def test_a_take_that_is_not_committed_leaves_the_token(storage: Storage, make: Make) -> None:
    alice = await _user(storage, make)
    token = _token(alice, "clear-1")
    await _add(storage, token)
    async with storage.begin() as uow:
        assert await uow.email_tokens.take(token.token_hash, RESET) == token
    async with storage.begin() as uow:
        assert await uow.email_tokens.find(token.token_hash, RESET) == token


async def _take_in_own_unit(storage: Storage, token_hash: str) -> EmailToken | None:
    async with storage.begin() as uow:
        got = await uow.email_tokens.take(token_hash, RESET)
        await asyncio.sleep(0.01)  # hold the unit open so the others overlap with it
        await uow.commit()
    return got


async def test_concurrent_takes_through_two_stores_have_exactly_one_winner(
    storage: Storage, open_peer: StorageFactory, make: Make
) -> None:
    peer = await open_peer()
    alice = await _user(storage, make)
    token = _token(alice, "clear-1")
    await _add(storage, token)
    results = await asyncio.gather(
        *(_take_in_own_unit(s, token.token_hash) for s in [storage, peer] * 4)
    )
    assert [r for r in results if r is not None] == [token]


async def test_void_deletes_only_the_users_tokens_of_that_purpose(
    storage: Storage, make: Make
) -> None:
    alice, bob = await _user(storage, make, "alice"), await _user(storage, make, "bob")
    a1, a2 = _token(alice, "a1"), _token(alice, "a2")
    a_verify, b1 = _token(alice, "a3", VERIFY), _token(bob, "b1")
    await _add(storage, a1, a2, a_verify, b1)
    async with storage.begin() as uow:
        assert await uow.email_tokens.void(alice, RESET) == 2
        assert await uow.email_tokens.void("nobody", RESET) == 0
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.email_tokens.find(a1.token_hash, RESET) is None
        assert await uow.email_tokens.find(a2.token_hash, RESET) is None
        assert await uow.email_tokens.find(a_verify.token_hash, VERIFY) == a_verify
        assert await uow.email_tokens.find(b1.token_hash, RESET) == b1


async def test_purge_expired_deletes_only_tokens_past_their_expiry(
    storage: Storage, make: Make
) -> None:
    alice = await _user(storage, make)
    short, long = _token(alice, "short", ttl=60), _token(alice, "long", VERIFY, ttl=3600)
    await _add(storage, short, long)
    async with storage.begin() as uow:
        assert await uow.email_tokens.purge_expired(T0 + timedelta(seconds=59)) == 0
        assert await uow.email_tokens.purge_expired(T0 + timedelta(seconds=60)) == 1
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.email_tokens.find(short.token_hash, RESET) is None
        assert await uow.email_tokens.find(long.token_hash, VERIFY) == long


async def test_deleting_the_user_deletes_its_tokens(storage: Storage, make: Make) -> None:
    alice = await _user(storage, make)
    token = _token(alice, "clear-1")
    await _add(storage, token)
    async with storage.begin() as uow:
        assert await uow.users.delete(alice)
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.email_tokens.find(token.token_hash, RESET) is None


async def test_only_the_hash_is_stored(storage: Storage, make: Make) -> None:
    """The store never sees a clear token: what it holds is the 64-hex SHA-256 digest."""
    alice = await _user(storage, make)
    token = _token(alice, "the-clear-token")
    await _add(storage, token)
    async with storage.begin() as uow:
        found = await uow.email_tokens.find(hash_token("the-clear-token"), RESET)
    assert found is not None
    assert found.token_hash != "the-clear-token"
    assert len(found.token_hash) == 64 and int(found.token_hash, 16) >= 0
