"""Contract of the InvitationRepo port (docs/reference/invitations.md) over every storage
adapter: round trip, hash-only lookups, paging by organization, and the conditional state
changes — single acceptance under concurrency (in one store and across two), no acceptance of an
expired, revoked or accepted link, a resend voiding the old link."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from application.ports import Storage
from application.shared.steps import hash_token
from domain.errors import Conflict
from domain.invitations import Invitation, InvitationState
from domain.model import Role
from tests.factories import T0, StorageFactory

TTL = timedelta(days=7)


def _invitation(
    id_: str, clear: str, org_id: str = "org-a", email: str = "new@example.com"
) -> Invitation:
    return Invitation(id_, org_id, email, Role.OPERATOR, ("g1", "g2"), "admin-1", T0, T0 + TTL,
                      hash_token(clear))  # fmt: skip


async def _add(storage: Storage, *invitations: Invitation) -> None:
    async with storage.begin() as uow:
        for invitation in invitations:
            await uow.invitations.add(invitation)
        await uow.commit()


async def test_add_then_get_and_find_by_token_round_trip(storage: Storage) -> None:
    invitation = _invitation("i1", "clear-1")
    await _add(storage, invitation)
    async with storage.read() as uow:
        assert await uow.invitations.get("i1") == invitation
        assert await uow.invitations.find_by_token(hash_token("clear-1")) == invitation
        assert await uow.invitations.find_by_token(hash_token("other")) is None
        assert await uow.invitations.get("nope") is None


async def test_add_refuses_a_duplicate_id_or_token_hash(storage: Storage) -> None:
    await _add(storage, _invitation("i1", "clear-1"))
    for duplicate in (_invitation("i1", "clear-2"), _invitation("i2", "clear-1")):
        async with storage.begin() as uow:
            with pytest.raises(Conflict):
                await uow.invitations.add(duplicate)


async def test_find_open_sees_only_a_live_pending_invitation_of_that_org_and_email(
    storage: Storage,
) -> None:
    await _add(storage, _invitation("i1", "c1"), _invitation("i2", "c2", org_id="org-b"))
    async with storage.begin() as uow:
        found = await uow.invitations.find_open("org-a", "new@example.com", T0)
        assert found is not None and found.id == "i1"
        assert await uow.invitations.find_open("org-a", "other@example.com", T0) is None
        assert await uow.invitations.find_open("org-a", "new@example.com", T0 + TTL) is None
        await uow.invitations.revoke("i1")
        assert await uow.invitations.find_open("org-a", "new@example.com", T0) is None


async def test_list_page_is_keyset_by_id_within_an_org(storage: Storage) -> None:
    await _add(storage, *(_invitation(f"i{n}", f"c{n}") for n in (3, 1, 2)),
               _invitation("i0", "c0", org_id="org-b"))  # fmt: skip
    async with storage.read() as uow:
        first = await uow.invitations.list_page("org-a", None, 2)
        rest = await uow.invitations.list_page("org-a", first[-1].id, 2)
        every = await uow.invitations.list_page(None, None, 10)
    assert [i.id for i in first] == ["i1", "i2"]
    assert [i.id for i in rest] == ["i3"]
    assert [i.id for i in every] == ["i0", "i1", "i2", "i3"]


async def test_accept_spends_the_link_once_and_records_the_account(storage: Storage) -> None:
    await _add(storage, _invitation("i1", "c1"))
    async with storage.begin() as uow:
        accepted = await uow.invitations.accept(hash_token("c1"), "user-9", T0)
        again = await uow.invitations.accept(hash_token("c1"), "user-10", T0)
        await uow.commit()
    assert accepted is not None and accepted.state is InvitationState.ACCEPTED
    assert accepted.accepted_user_id == "user-9"
    assert again is None
    async with storage.read() as uow:
        assert await uow.invitations.get("i1") == accepted


async def test_accept_refuses_an_expired_revoked_or_unknown_link(storage: Storage) -> None:
    await _add(storage, _invitation("i1", "c1"), _invitation("i2", "c2", email="b@example.com"))
    async with storage.begin() as uow:
        assert await uow.invitations.accept(hash_token("c1"), "u", T0 + TTL) is None
        assert await uow.invitations.revoke("i2") is not None
        assert await uow.invitations.accept(hash_token("c2"), "u", T0) is None
        assert await uow.invitations.accept(hash_token("nope"), "u", T0) is None
        await uow.commit()
    async with storage.read() as uow:
        assert (await uow.invitations.get("i1")) == _invitation("i1", "c1")  # unchanged


async def test_revoke_and_renew_change_only_a_pending_invitation(storage: Storage) -> None:
    await _add(storage, _invitation("i1", "c1"))
    later = T0 + 2 * TTL
    async with storage.begin() as uow:  # an expired pending invitation may be renewed
        renewed = await uow.invitations.renew("i1", hash_token("c2"), later, "admin-2")
        await uow.commit()
    assert renewed is not None
    assert (renewed.token_hash, renewed.expires_at, renewed.invited_by) == (
        hash_token("c2"), later, "admin-2")  # fmt: skip
    async with storage.begin() as uow:
        assert await uow.invitations.accept(hash_token("c1"), "u", T0) is None  # old link void
        revoked = await uow.invitations.revoke("i1")
        assert revoked is not None and revoked.state is InvitationState.REVOKED
        assert await uow.invitations.revoke("i1") is None
        assert await uow.invitations.renew("i1", hash_token("c3"), later, "admin-2") is None
        assert await uow.invitations.get("nope") is None
        assert await uow.invitations.revoke("nope") is None
        await uow.commit()


async def test_renew_refuses_a_token_hash_of_another_invitation(storage: Storage) -> None:
    await _add(storage, _invitation("i1", "c1"), _invitation("i2", "c2", email="b@example.com"))
    async with storage.begin() as uow:
        with pytest.raises(Conflict):
            await uow.invitations.renew("i1", hash_token("c2"), T0 + TTL, "admin-1")


async def test_a_rolled_back_acceptance_leaves_the_invitation_pending(storage: Storage) -> None:
    await _add(storage, _invitation("i1", "c1"))
    async with storage.begin() as uow:
        assert await uow.invitations.accept(hash_token("c1"), "u", T0) is not None
    async with storage.read() as uow:
        found = await uow.invitations.get("i1")
    assert found is not None and found.state is InvitationState.PENDING


async def _accept_in_own_unit(storage: Storage, token_hash: str, user: str) -> Invitation | None:
    async with storage.begin() as uow:
        got = await uow.invitations.accept(token_hash, user, T0)
        await asyncio.sleep(0.01)  # hold the unit open so the others overlap with it
        await uow.commit()
    return got


async def test_concurrent_acceptances_through_two_stores_have_exactly_one_winner(
    storage: Storage, open_peer: StorageFactory
) -> None:
    peer = await open_peer()
    await _add(storage, _invitation("i1", "c1"))
    results = await asyncio.gather(
        *(_accept_in_own_unit(s, hash_token("c1"), f"u{n}")
          for n, s in enumerate([storage, peer] * 4))
    )  # fmt: skip
    winners = [r for r in results if r is not None]
    assert len(winners) == 1
    async with storage.read() as uow:
        stored = await uow.invitations.get("i1")
    assert stored == winners[0]
