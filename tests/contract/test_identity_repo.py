"""Contract of the FederatedIdentityRepo port (docs/reference/federation.md) over every storage
adapter: an identity is (issuer, subject), linked to one user and once per user and provider; it
goes with its user; a started login is taken once."""

from __future__ import annotations

from datetime import timedelta

import attrs
import pytest

from application.ports import Storage
from domain.errors import Conflict, NotFound
from domain.federation import FederatedIdentity, FederationFlow, UpstreamIdentity
from tests.factories import T0, Make

ISS = "https://idp.example"


async def _user(storage: Storage, make: Make, user_id: str = "alice") -> str:
    async with storage.begin() as uow:
        await uow.users.add(make.user(id=user_id))
        await uow.commit()
    return user_id


def _identity(subject: str = "s1", user_id: str = "alice", provider: str = "idp",
              issuer: str = ISS) -> FederatedIdentity:  # fmt: skip
    return FederatedIdentity(issuer, subject, provider, user_id, f"{subject}@example.com",
                             T0 + timedelta(microseconds=int(subject[-1])))  # fmt: skip


def _flow(state_hash: str = "a" * 64, link_user_id: str | None = None,
          expires_in: int = 600) -> FederationFlow:  # fmt: skip
    return FederationFlow(state_hash, "idp", "b" * 64, "nonce-1", "verifier-1", "/ui/account",
                          link_user_id, T0, T0 + timedelta(seconds=expires_in))  # fmt: skip


async def test_identities_round_trip_and_list_oldest_first(storage: Storage, make: Make) -> None:
    await _user(storage, make)
    first, second = _identity("s1"), _identity("s2", provider="other", issuer="https://o.example")
    async with storage.begin() as uow:
        await uow.identities.add(second)
        await uow.identities.add(first)
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.identities.find(ISS, "s1") == first
        assert await uow.identities.find(ISS, "nobody") is None
        assert await uow.identities.find("https://o.example", "s1") is None
        assert await uow.identities.list_for_user("alice") == [first, second]
        assert await uow.identities.list_for_user("bob") == []


async def test_an_identity_is_linked_to_one_user_once_per_provider(
    storage: Storage, make: Make
) -> None:
    """UP-10: the same upstream (iss, sub) cannot be linked to two users."""
    await _user(storage, make)
    await _user(storage, make, "bob")
    async with storage.begin() as uow:
        await uow.identities.add(_identity("s1"))
        await uow.commit()
    async with storage.begin() as uow:
        with pytest.raises(Conflict):
            await uow.identities.add(_identity("s1", user_id="bob"))
    async with storage.begin() as uow:
        with pytest.raises(Conflict):
            await uow.identities.add(_identity("s2"))  # alice has one of provider idp
    async with storage.begin() as uow:
        with pytest.raises(NotFound):
            await uow.identities.add(_identity("s3", user_id="ghost"))
    async with storage.begin() as uow:
        assert [i.subject for i in await uow.identities.list_for_user("bob")] == []


async def test_use_and_unlink(storage: Storage, make: Make) -> None:
    await _user(storage, make)
    async with storage.begin() as uow:
        await uow.identities.add(_identity("s1"))
        await uow.commit()
    used_at = T0 + timedelta(days=1, microseconds=5)
    async with storage.begin() as uow:
        await uow.identities.record_use(ISS, "s1", "new@example.com", used_at)
        await uow.commit()
    async with storage.begin() as uow:
        found = await uow.identities.find(ISS, "s1")
        assert found is not None
        assert (found.last_used_at, found.email) == (used_at, "new@example.com")
        assert await uow.identities.delete("alice", "nope") is None
        removed = await uow.identities.delete("alice", "idp")
        assert removed == found
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.identities.find(ISS, "s1") is None


async def test_identities_and_link_flows_go_with_their_user(storage: Storage, make: Make) -> None:
    await _user(storage, make)
    async with storage.begin() as uow:
        await uow.identities.add(_identity("s1"))
        await uow.identities.put_flow(_flow(link_user_id="alice"))
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.users.delete("alice")
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.identities.find(ISS, "s1") is None
        assert await uow.identities.take_flow("a" * 64, "b" * 64) is None


async def test_a_flow_is_taken_once(storage: Storage, make: Make) -> None:
    """UP-03: a state is single use."""
    await _user(storage, make)
    flow = _flow(link_user_id="alice")
    async with storage.begin() as uow:
        await uow.identities.put_flow(flow)
        await uow.identities.put_flow(_flow("c" * 64))
        await uow.commit()
    async with storage.begin() as uow:
        with pytest.raises(Conflict):
            await uow.identities.put_flow(_flow())
    async with storage.begin() as uow:
        assert await uow.identities.take_flow("a" * 64, "b" * 64) == flow
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.identities.take_flow("a" * 64, "b" * 64) is None
        with pytest.raises(NotFound):
            await uow.identities.put_flow(_flow("d" * 64, link_user_id="ghost"))


async def test_expired_flows_are_purged(storage: Storage, make: Make) -> None:
    async with storage.begin() as uow:
        await uow.identities.put_flow(_flow("a" * 64, expires_in=10))
        await uow.identities.put_flow(_flow("c" * 64, expires_in=600))
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.identities.purge_expired(T0 + timedelta(seconds=60)) == 1
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.identities.take_flow("a" * 64, "b" * 64) is None
        assert await uow.identities.take_flow("c" * 64, "b" * 64) is not None


async def test_a_flow_of_another_browser_is_left_in_place(storage: Storage, make: Make) -> None:
    """docs/reference/federation.md: the state is taken only when the browser cookie matches, so a
    state seen by someone else (logs, Referer) cannot void the legitimate login."""
    async with storage.begin() as uow:
        await uow.identities.put_flow(_flow())
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.identities.take_flow("a" * 64, "e" * 64) is None
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.identities.take_flow("a" * 64, "b" * 64) == _flow()


async def test_a_link_waiting_for_confirmation_keeps_its_upstream(
    storage: Storage, make: Make
) -> None:
    await _user(storage, make)
    up = UpstreamIdentity(ISS, "s9", "s9@example.com")
    waiting = attrs.evolve(_flow(link_user_id="alice"), upstream=up)
    async with storage.begin() as uow:
        await uow.identities.put_flow(waiting)
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.identities.take_flow("a" * 64, "b" * 64) == waiting


async def test_identities_linked_unverified_are_removed(storage: Storage, make: Make) -> None:
    """Pre-hijacked accounts: only the identities linked while the email was unverified go."""
    await _user(storage, make)
    proven = attrs.evolve(_identity("s1"), email_was_verified=True)
    unproven = _identity("s2", provider="other", issuer="https://o.example")
    async with storage.begin() as uow:
        await uow.identities.add(proven)
        await uow.identities.add(unproven)
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.identities.remove_unproven("alice") == [unproven]
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.identities.list_for_user("alice") == [proven]
        assert await uow.identities.remove_unproven("alice") == []


async def test_a_nonce_is_spent_once_until_it_expires(storage: Storage, make: Make) -> None:
    """POST /login/federated: (issuer, nonce) accepted once until the token's exp; purged."""
    until = T0 + timedelta(seconds=300)
    async with storage.begin() as uow:
        assert await uow.identities.spend_nonce(ISS, "n" * 64, until, T0)
        assert await uow.identities.spend_nonce("https://o.example", "n" * 64, until, T0)
        await uow.commit()
    async with storage.begin() as uow:
        assert not await uow.identities.spend_nonce(ISS, "n" * 64, until, T0)
        later = T0 + timedelta(seconds=301)
        assert await uow.identities.spend_nonce(ISS, "n" * 64, later + timedelta(seconds=9), later)
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.identities.purge_expired(T0 + timedelta(days=1)) == 2
        await uow.commit()
