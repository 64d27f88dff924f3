"""Contract of the SessionStore port and of what the user lifecycle needs from the UserRepo and
the TokenStore (docs/reference/tokens-and-sessions.md and docs/reference/accounts.md), over every
storage adapter."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import attrs
import pytest

from application.ports import Storage
from domain.errors import Conflict, NotFound
from domain.model import RefreshToken, Role, Session
from tests.factories import T0, Make, StorageFactory


async def _user(storage: Storage, make: Make, user_id: str, **kw: object) -> str:
    async with storage.begin() as uow:
        await uow.users.add(make.user(id=user_id, **kw))  # type: ignore[arg-type]
        await uow.commit()
    return user_id


async def _login(storage: Storage, make: Make, session: Session, *tokens: RefreshToken) -> None:
    async with storage.begin() as uow:
        await uow.sessions.add(session)
        for t in tokens:
            await uow.tokens.add(t)
        await uow.commit()


async def test_add_then_get_round_trips(storage: Storage, make: Make) -> None:
    alice = await _user(storage, make, "alice")
    session = make.session(alice, user_agent="Mozilla/5.0 ünïcode")
    await _login(storage, make, session)
    async with storage.begin() as uow:
        assert await uow.sessions.get(session.id) == session
        assert await uow.sessions.get("nope") is None


async def test_add_refuses_an_unknown_user_and_a_duplicate_id(storage: Storage, make: Make) -> None:
    alice = await _user(storage, make, "alice")
    session = make.session(alice)
    await _login(storage, make, session)
    async with storage.begin() as uow:
        with pytest.raises(NotFound):
            await uow.sessions.add(make.session("ghost"))
    async with storage.begin() as uow:
        with pytest.raises(Conflict):
            await uow.sessions.add(session)


async def test_last_used_at_follows_each_token_stored_for_the_family(
    storage: Storage, make: Make
) -> None:
    alice = await _user(storage, make, "alice")
    session = make.session(alice)
    await _login(storage, make, session, make.token(alice, session.id))
    later = attrs.evolve(make.token(alice, session.id), created_at=T0 + timedelta(minutes=5))
    async with storage.begin() as uow:
        await uow.tokens.add(later)
        await uow.commit()
    async with storage.begin() as uow:
        found = await uow.sessions.get(session.id)
    assert found is not None and found.last_used_at == T0 + timedelta(minutes=5)
    assert found.created_at == T0


async def test_touch_moves_last_used_at_on_never_back_and_only_that_session(
    storage: Storage, make: Make
) -> None:
    alice = await _user(storage, make, "alice")
    session, other = make.session(alice), make.session(alice)
    await _login(storage, make, session)
    await _login(storage, make, other)
    async with storage.begin() as uow:
        await uow.sessions.touch(session.id, T0 + timedelta(minutes=7))
        await uow.sessions.touch("nope", T0 + timedelta(minutes=7))  # nothing, no error
        await uow.commit()
    async with storage.begin() as uow:
        await uow.sessions.touch(session.id, T0 + timedelta(minutes=3))  # earlier: ignored
        await uow.commit()
    async with storage.read() as uow:
        found, untouched = await uow.sessions.get(session.id), await uow.sessions.get(other.id)
    assert found == attrs.evolve(session, last_used_at=T0 + timedelta(minutes=7))
    assert untouched == other


async def test_list_live_is_newest_first_and_only_live_sessions_of_the_user(
    storage: Storage, make: Make
) -> None:
    alice = await _user(storage, make, "alice")
    bob = await _user(storage, make, "bob")
    now = T0 + timedelta(minutes=30)
    older = make.session(alice, created_at=T0)
    newer = make.session(alice, created_at=T0 + timedelta(minutes=1))
    idle = make.session(alice, created_at=T0 + timedelta(minutes=2))  # its token expired
    ended = make.session(alice, created_at=T0 + timedelta(minutes=3), expires_at=now)
    theirs = make.session(bob, created_at=T0 + timedelta(minutes=4))
    await _login(storage, make, older, make.token(alice, older.id))
    await _login(storage, make, newer, make.token(alice, newer.id))
    await _login(storage, make, idle, make.token(alice, idle.id, expires_at=now))
    await _login(storage, make, ended, make.token(alice, ended.id))
    await _login(storage, make, theirs, make.token(bob, theirs.id))
    async with storage.read() as uow:
        live = await uow.sessions.list_live(alice, now)
    assert [s.id for s in live] == [newer.id, older.id]


async def test_end_deletes_the_session_and_only_its_live_tokens(
    storage: Storage, make: Make
) -> None:
    alice = await _user(storage, make, "alice")
    a, b = make.session(alice), make.session(alice)
    a1, a2, b1 = make.token(alice, a.id), make.token(alice, a.id), make.token(alice, b.id)
    rotated = make.token(alice, a.id)
    await _login(storage, make, a, a1, a2)
    await _login(storage, make, b, b1)
    async with storage.begin() as uow:
        await uow.tokens.remember_rotated(rotated, T0)
        assert await uow.sessions.end(a.id) == 2
        assert await uow.sessions.end(a.id) == 0
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.sessions.get(a.id) is None
        assert await uow.tokens.find(a1.token_hash) is None
        assert await uow.tokens.find(a2.token_hash) is None
        assert await uow.tokens.find(b1.token_hash) == b1
        assert await uow.sessions.get(b.id) == b
        # The rotated record stays: a replay is still recognised as reuse.
        assert await uow.tokens.find_rotated(rotated.token_hash) == rotated


async def test_end_all_ends_every_session_of_the_user_only(storage: Storage, make: Make) -> None:
    alice = await _user(storage, make, "alice")
    bob = await _user(storage, make, "bob")
    mine = [make.session(alice) for _ in range(3)]
    for s in mine:
        await _login(storage, make, s, make.token(alice, s.id))
    theirs = make.session(bob)
    their_token = make.token(bob, theirs.id)
    await _login(storage, make, theirs, their_token)
    async with storage.begin() as uow:
        assert await uow.sessions.end_all(alice) == sorted(s.id for s in mine)
        assert await uow.sessions.end_all(alice) == []
        await uow.commit()
    async with storage.read() as uow:
        assert await uow.sessions.list_live(alice, T0) == []
        assert await uow.tokens.find(their_token.token_hash) == their_token
        assert [s.id for s in await uow.sessions.list_live(bob, T0)] == [theirs.id]


async def test_end_all_but_one_keeps_that_session_and_its_tokens(
    storage: Storage, make: Make
) -> None:
    """The account page's password change: every session of the user ends but ``keep``."""
    alice = await _user(storage, make, "alice")
    kept, *others = [make.session(alice) for _ in range(3)]
    kept_token = make.token(alice, kept.id)
    await _login(storage, make, kept, kept_token)
    other_tokens = [make.token(alice, s.id) for s in others]
    for s, t in zip(others, other_tokens, strict=True):
        await _login(storage, make, s, t)
    async with storage.begin() as uow:
        assert await uow.sessions.end_all(alice, keep=kept.id) == sorted(s.id for s in others)
        assert await uow.sessions.end_all(alice, keep=kept.id) == []
        await uow.commit()
    async with storage.read() as uow:
        assert [s.id for s in await uow.sessions.list_live(alice, T0)] == [kept.id]
        assert await uow.tokens.find(kept_token.token_hash) == kept_token
        for t in other_tokens:
            assert await uow.tokens.find(t.token_hash) is None


async def test_purge_expired_removes_ended_by_time_sessions_only(
    storage: Storage, make: Make
) -> None:
    alice = await _user(storage, make, "alice")
    now = T0 + timedelta(hours=2)
    live = make.session(alice)
    tokenless = make.session(alice)
    past_end = make.session(alice, expires_at=now)
    await _login(storage, make, live, make.token(alice, live.id, expires_at=now + timedelta(1)))
    await _login(storage, make, tokenless)
    await _login(storage, make, past_end, make.token(alice, past_end.id))
    async with storage.begin() as uow:
        assert await uow.sessions.purge_expired(now) == 2
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.sessions.get(live.id) == live
        assert await uow.sessions.get(tokenless.id) is None
        assert await uow.sessions.get(past_end.id) is None


async def test_user_delete_takes_everything_hanging_off_the_user(
    storage: Storage, make: Make
) -> None:
    alice = await _user(storage, make, "alice", email="alice@example.com")
    bob = await _user(storage, make, "bob")
    group = make.group()
    session, theirs = make.session(alice), make.session(bob)
    token, rotated, their_token = (
        make.token(alice, session.id),
        make.token(alice, session.id),
        make.token(bob, theirs.id),
    )
    await _login(storage, make, session, token)
    await _login(storage, make, theirs, their_token)
    async with storage.begin() as uow:
        await uow.groups.add(group)
        await uow.groups.add_member(group.id, alice, T0)
        await uow.groups.add_member(group.id, bob, T0)
        await uow.tokens.remember_rotated(rotated, T0)
        assert await uow.users.delete(alice) is True
        assert await uow.users.delete(alice) is False
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.users.get(alice) is None
        assert await uow.sessions.get(session.id) is None
        assert await uow.tokens.find(token.token_hash) is None
        assert await uow.tokens.find_rotated(rotated.token_hash) is None
        assert [u.id for u in await uow.groups.members(group.id)] == [bob]
        assert await uow.tokens.find(their_token.token_hash) == their_token
        # The email is free again.
        await uow.users.add(make.user(id="alice2", email="alice@example.com"))
        await uow.commit()


async def test_disabled_and_email_verified_round_trip_and_disabled_users_do_not_count(
    storage: Storage, make: Make
) -> None:
    root = await _user(storage, make, "root", role=Role.SUPERADMIN)
    await _user(storage, make, "root2", role=Role.SUPERADMIN)
    async with storage.begin() as uow:
        assert await uow.users.count_by_role(Role.SUPERADMIN) == 2
        user = await uow.users.get(root)
        assert user is not None and not user.disabled and not user.email_verified
        await uow.users.update(attrs.evolve(user, disabled=True, email_verified=True))
        await uow.commit()
    async with storage.begin() as uow:
        stored = await uow.users.get(root)
        assert stored is not None and stored.disabled and stored.email_verified
        assert await uow.users.count_by_role(Role.SUPERADMIN) == 1


# --------------------------------------------------------------------------- reuse interval


async def _rotated(storage: Storage, make: Make, rotated_at: object = T0) -> RefreshToken:
    alice = await _user(storage, make, "alice")
    session = make.session(alice)
    token = make.token(alice, session.id)
    await _login(storage, make, session)
    async with storage.begin() as uow:
        await uow.tokens.remember_rotated(token, rotated_at)  # type: ignore[arg-type]
        await uow.commit()
    return token


async def test_claim_reuse_counts_up_to_the_cap_inside_the_window(
    storage: Storage, make: Make
) -> None:
    token = await _rotated(storage, make)
    async with storage.begin() as uow:
        assert await uow.tokens.claim_reuse(token.token_hash, T0, 2) == token
        assert await uow.tokens.claim_reuse(token.token_hash, T0, 2) == token
        assert await uow.tokens.claim_reuse(token.token_hash, T0, 2) is None  # the cap
        assert await uow.tokens.claim_reuse("f" * 64, T0, 2) is None
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.tokens.claim_reuse(token.token_hash, T0, 3) == token  # count kept


async def test_claim_reuse_refuses_a_token_rotated_before_the_window(
    storage: Storage, make: Make
) -> None:
    token = await _rotated(storage, make)
    async with storage.begin() as uow:
        since = T0 + timedelta(microseconds=1)
        assert await uow.tokens.claim_reuse(token.token_hash, since, 2) is None
        assert await uow.tokens.claim_reuse(token.token_hash, T0, 2) == token


async def test_remembering_again_starts_the_reuse_count_again(storage: Storage, make: Make) -> None:
    token = await _rotated(storage, make)
    async with storage.begin() as uow:
        assert await uow.tokens.claim_reuse(token.token_hash, T0, 1) == token
        assert await uow.tokens.claim_reuse(token.token_hash, T0, 1) is None
        await uow.tokens.remember_rotated(token, T0)
        assert await uow.tokens.claim_reuse(token.token_hash, T0, 1) == token


async def _claim_in_own_unit(storage: Storage, token_hash: str, cap: int) -> bool:
    async with storage.begin() as uow:
        won = await uow.tokens.claim_reuse(token_hash, T0, cap) is not None
        await asyncio.sleep(0.01)  # hold the unit open so the others overlap with it
        await uow.commit()
    return won


async def test_concurrent_claims_through_two_stores_never_pass_the_cap(
    storage: Storage, open_peer: StorageFactory, make: Make
) -> None:
    """The compare-and-set is in the database: two pools (postgres) or two connections to one
    file (sqlite) racing for one rotated token get exactly ``cap`` successes."""
    peer = await open_peer()
    token = await _rotated(storage, make)
    stores = [storage, peer] * 6
    won = await asyncio.gather(*(_claim_in_own_unit(s, token.token_hash, 2) for s in stores))
    assert sum(won) == 2


async def test_count_live_counts_the_live_sessions_of_an_org_or_of_every_org(
    storage: Storage, make: Make
) -> None:
    """The admin dashboard's count (docs/reference/console.md): the rule of ``list_live``, over the
    users of one organization (None: all)."""
    alice = await _user(storage, make, "alice", org_id="org-a")
    bob = await _user(storage, make, "bob", org_id="org-b")
    now = T0 + timedelta(minutes=30)
    live = make.session(alice, created_at=T0)
    idle = make.session(alice, created_at=T0 + timedelta(minutes=1))  # its token expired
    theirs = make.session(bob, created_at=T0 + timedelta(minutes=2))
    await _login(storage, make, live, make.token(alice, live.id))
    await _login(storage, make, idle, make.token(alice, idle.id, expires_at=now))
    await _login(storage, make, theirs, make.token(bob, theirs.id))
    async with storage.read() as uow:
        assert await uow.sessions.count_live("org-a", now) == 1
        assert await uow.sessions.count_live("org-b", now) == 1
        assert await uow.sessions.count_live("org-c", now) == 0
        assert await uow.sessions.count_live(None, now) == 2
