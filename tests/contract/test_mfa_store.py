"""Contract of the MfaStore port (docs/reference/mfa-and-passkeys.md) over every storage adapter:
pending and confirmed secrets, the one-use compare-and-set on the time step and on recovery codes
(in one store and across two), second steps that are single use and void after too many failures,
purging, rollback, and the cascade when the user goes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta

import pytest

from application.ports import Storage, UnitOfWork
from application.shared.steps import hash_token
from domain.errors import Conflict, NotFound
from domain.model import MfaChallenge
from tests.factories import T0, Make, StorageFactory

SEALED = b"\x00sealed-secret\xff" * 3
STEP = 59_000_000
HASHES = [hash_token(f"code-{i}") for i in range(10)]


async def _user(storage: Storage, make: Make, user_id: str = "alice") -> str:
    async with storage.begin() as uow:
        await uow.users.add(make.user(id=user_id))
        await uow.commit()
    return user_id


async def _enrolled(storage: Storage, make: Make, user_id: str = "alice") -> str:
    """A user with a confirmed secret (last step ``STEP``) and the ten ``HASHES``."""
    await _user(storage, make, user_id)
    async with storage.begin() as uow:
        await uow.mfa.put_pending(user_id, SEALED, T0)
        assert await uow.mfa.confirm(user_id, STEP, HASHES)
        await uow.commit()
    return user_id


def _challenge(user_id: str, clear: str, ttl: int = 300) -> MfaChallenge:
    return MfaChallenge(hash_token(clear), user_id, T0 + timedelta(seconds=ttl), T0)


async def _add(storage: Storage, *challenges: MfaChallenge) -> None:
    async with storage.begin() as uow:
        for challenge in challenges:
            await uow.mfa.add_challenge(challenge)
        await uow.commit()


async def test_a_pending_secret_round_trips_and_is_replaced_by_the_next(
    storage: Storage, make: Make
) -> None:
    alice = await _user(storage, make)
    async with storage.begin() as uow:
        assert await uow.mfa.get_totp(alice) is None
        await uow.mfa.put_pending(alice, b"first", T0)
        await uow.mfa.put_pending(alice, SEALED, T0 + timedelta(seconds=5))
        await uow.commit()
    async with storage.begin() as uow:
        credential = await uow.mfa.get_totp(alice)
    assert credential is not None
    assert credential.user_id == alice and credential.sealed_secret == SEALED
    assert not credential.confirmed and credential.last_step is None
    assert credential.created_at == T0 + timedelta(seconds=5)


async def test_put_pending_refuses_an_unknown_user_and_a_user_with_mfa_on(
    storage: Storage, make: Make
) -> None:
    alice = await _enrolled(storage, make)
    async with storage.begin() as uow:
        with pytest.raises(NotFound):
            await uow.mfa.put_pending("ghost", SEALED, T0)
    async with storage.begin() as uow:
        with pytest.raises(Conflict):
            await uow.mfa.put_pending(alice, b"other", T0)
    async with storage.begin() as uow:
        credential = await uow.mfa.get_totp(alice)
    assert credential is not None and credential.confirmed and credential.sealed_secret == SEALED


async def test_confirm_switches_on_once_with_the_step_and_the_codes(
    storage: Storage, make: Make
) -> None:
    alice = await _user(storage, make)
    async with storage.begin() as uow:
        assert not await uow.mfa.confirm(alice, STEP, HASHES)  # nothing pending
        await uow.mfa.put_pending(alice, SEALED, T0)
        assert await uow.mfa.confirm(alice, STEP, HASHES)
        assert not await uow.mfa.confirm(alice, STEP + 1, HASHES[:1])  # already on
        await uow.commit()
    async with storage.begin() as uow:
        credential = await uow.mfa.get_totp(alice)
        assert credential is not None and credential.confirmed
        assert credential.last_step == STEP
        assert await uow.mfa.recovery_codes_left(alice) == 10


async def test_claim_step_moves_forward_only(storage: Storage, make: Make) -> None:
    alice = await _enrolled(storage, make)
    async with storage.begin() as uow:
        assert not await uow.mfa.claim_step(alice, STEP)  # the confirming code's step
        assert not await uow.mfa.claim_step(alice, STEP - 1)
        assert await uow.mfa.claim_step(alice, STEP + 1)
        assert not await uow.mfa.claim_step(alice, STEP + 1)  # replay
        assert await uow.mfa.claim_step(alice, STEP + 3)
        await uow.commit()
    async with storage.begin() as uow:
        credential = await uow.mfa.get_totp(alice)
        assert credential is not None and credential.last_step == STEP + 3


async def test_claim_step_refuses_a_pending_secret_and_an_unknown_user(
    storage: Storage, make: Make
) -> None:
    alice = await _user(storage, make)
    async with storage.begin() as uow:
        await uow.mfa.put_pending(alice, SEALED, T0)
        assert not await uow.mfa.claim_step(alice, STEP)
        assert not await uow.mfa.claim_step("ghost", STEP)


async def test_a_recovery_code_works_once(storage: Storage, make: Make) -> None:
    alice = await _enrolled(storage, make)
    async with storage.begin() as uow:
        assert await uow.mfa.use_recovery_code(alice, HASHES[3])
        assert not await uow.mfa.use_recovery_code(alice, HASHES[3])
        assert not await uow.mfa.use_recovery_code(alice, hash_token("not-a-code"))
        assert not await uow.mfa.use_recovery_code("ghost", HASHES[4])
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.mfa.recovery_codes_left(alice) == 9
        assert await uow.mfa.recovery_codes_left("ghost") == 0


async def test_replace_recovery_codes_needs_mfa_on_and_drops_the_old_ones(
    storage: Storage, make: Make
) -> None:
    alice = await _enrolled(storage, make, "alice")
    bob = await _user(storage, make, "bob")
    fresh = [hash_token(f"new-{i}") for i in range(10)]
    async with storage.begin() as uow:
        assert await uow.mfa.replace_recovery_codes(alice, fresh)
        assert not await uow.mfa.replace_recovery_codes(bob, fresh)  # no secret
        await uow.mfa.put_pending(bob, SEALED, T0)
        assert not await uow.mfa.replace_recovery_codes(bob, fresh)  # pending only
        assert not await uow.mfa.replace_recovery_codes("ghost", fresh)
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.mfa.recovery_codes_left(alice) == 10
        assert await uow.mfa.recovery_codes_left(bob) == 0
        assert not await uow.mfa.use_recovery_code(alice, HASHES[0])
        assert await uow.mfa.use_recovery_code(alice, fresh[0])
        await uow.commit()


async def test_recovery_codes_are_per_user(storage: Storage, make: Make) -> None:
    alice = await _enrolled(storage, make, "alice")
    bob = await _user(storage, make, "bob")
    async with storage.begin() as uow:
        await uow.mfa.put_pending(bob, SEALED, T0)
        assert await uow.mfa.confirm(bob, STEP, HASHES)  # the same hashes for another user
        assert await uow.mfa.use_recovery_code(alice, HASHES[0])
        assert await uow.mfa.use_recovery_code(bob, HASHES[0])
        await uow.commit()


async def test_remove_deletes_secret_codes_and_second_steps(storage: Storage, make: Make) -> None:
    alice = await _enrolled(storage, make)
    bob = await _enrolled(storage, make, "bob")
    mine, theirs = _challenge(alice, "a"), _challenge(bob, "b")
    await _add(storage, mine, theirs)
    async with storage.begin() as uow:
        assert await uow.mfa.remove(alice)
        assert not await uow.mfa.remove(alice)
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.mfa.get_totp(alice) is None
        assert await uow.mfa.recovery_codes_left(alice) == 0
        assert await uow.mfa.find_challenge(mine.token_hash) is None
        assert await uow.mfa.find_challenge(theirs.token_hash) == theirs
        assert await uow.mfa.recovery_codes_left(bob) == 10


async def test_void_challenges_deletes_only_that_users_second_steps(
    storage: Storage, make: Make
) -> None:
    """docs/reference/accounts.md: a password change or reset, disabling and deleting void every
    ``mfa_token`` of the user; its secret and recovery codes stay, other users' steps too."""
    alice = await _enrolled(storage, make)
    bob = await _enrolled(storage, make, "bob")
    first, second, theirs = _challenge(alice, "a"), _challenge(alice, "b", 1), _challenge(bob, "c")
    await _add(storage, first, second, theirs)
    async with storage.begin() as uow:
        assert await uow.mfa.void_challenges(alice) == 2
        assert await uow.mfa.void_challenges(alice) == 0
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.mfa.find_challenge(first.token_hash) is None
        assert await uow.mfa.find_challenge(second.token_hash) is None
        assert await uow.mfa.find_challenge(theirs.token_hash) == theirs
        assert (await uow.mfa.get_totp(alice)) is not None
        assert await uow.mfa.recovery_codes_left(alice) == 10
        assert await uow.mfa.void_challenges("ghost") == 0


async def test_remove_of_a_pending_secret_reports_mfa_was_off(storage: Storage, make: Make) -> None:
    alice = await _user(storage, make)
    async with storage.begin() as uow:
        await uow.mfa.put_pending(alice, SEALED, T0)
        assert not await uow.mfa.remove(alice)
        assert await uow.mfa.get_totp(alice) is None


async def test_a_challenge_round_trips_and_is_taken_once(storage: Storage, make: Make) -> None:
    alice = await _user(storage, make)
    challenge = _challenge(alice, "mfa-token")
    await _add(storage, challenge)
    async with storage.begin() as uow:
        assert await uow.mfa.find_challenge(challenge.token_hash) == challenge
        assert await uow.mfa.find_challenge(hash_token("other")) is None
        assert await uow.mfa.take_challenge(challenge.token_hash) == challenge
        assert await uow.mfa.take_challenge(challenge.token_hash) is None
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.mfa.find_challenge(challenge.token_hash) is None


async def test_add_challenge_refuses_an_unknown_user_and_a_duplicate_hash(
    storage: Storage, make: Make
) -> None:
    alice = await _user(storage, make)
    challenge = _challenge(alice, "mfa-token")
    await _add(storage, challenge)
    async with storage.begin() as uow:
        with pytest.raises(NotFound):
            await uow.mfa.add_challenge(_challenge("ghost", "other"))
    async with storage.begin() as uow:
        with pytest.raises(Conflict):
            await uow.mfa.add_challenge(challenge)


async def test_purge_expired_deletes_only_challenges_past_their_expiry(
    storage: Storage, make: Make
) -> None:
    alice = await _user(storage, make)
    short, long = _challenge(alice, "short", ttl=60), _challenge(alice, "long", ttl=300)
    await _add(storage, short, long)
    async with storage.begin() as uow:
        assert await uow.mfa.purge_expired(T0 + timedelta(seconds=59)) == 0
        assert await uow.mfa.purge_expired(T0 + timedelta(seconds=60)) == 1
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.mfa.find_challenge(short.token_hash) is None
        assert await uow.mfa.find_challenge(long.token_hash) == long


async def test_changes_not_committed_are_rolled_back(storage: Storage, make: Make) -> None:
    alice = await _enrolled(storage, make)
    challenge = _challenge(alice, "mfa-token")
    await _add(storage, challenge)
    async with storage.begin() as uow:
        assert await uow.mfa.claim_step(alice, STEP + 1)
        assert await uow.mfa.use_recovery_code(alice, HASHES[0])
        assert await uow.mfa.take_challenge(challenge.token_hash) == challenge
    async with storage.begin() as uow:
        credential = await uow.mfa.get_totp(alice)
        assert credential is not None and credential.last_step == STEP
        assert await uow.mfa.recovery_codes_left(alice) == 10
        assert await uow.mfa.find_challenge(challenge.token_hash) == challenge


async def test_deleting_the_user_deletes_its_second_factors(storage: Storage, make: Make) -> None:
    alice = await _enrolled(storage, make)
    challenge = _challenge(alice, "mfa-token")
    await _add(storage, challenge)
    async with storage.begin() as uow:
        assert await uow.users.delete(alice)
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.mfa.get_totp(alice) is None
        assert await uow.mfa.recovery_codes_left(alice) == 0
        assert await uow.mfa.find_challenge(challenge.token_hash) is None


async def _in_own_unit(storage: Storage, act: Callable[[UnitOfWork], Awaitable[object]]) -> object:
    async with storage.begin() as uow:
        got = await act(uow)
        await asyncio.sleep(0.01)  # hold the unit open so the others overlap with it
        await uow.commit()
    return got


async def test_concurrent_claims_of_one_step_through_two_stores_have_one_winner(
    storage: Storage, open_peer: StorageFactory, make: Make
) -> None:
    peer = await open_peer()
    alice = await _enrolled(storage, make)
    results = await asyncio.gather(
        *(_in_own_unit(s, lambda u: u.mfa.claim_step(alice, STEP + 1)) for s in [storage, peer] * 4)
    )
    assert results.count(True) == 1


async def test_concurrent_uses_of_one_recovery_code_through_two_stores_have_one_winner(
    storage: Storage, open_peer: StorageFactory, make: Make
) -> None:
    peer = await open_peer()
    alice = await _enrolled(storage, make)
    results = await asyncio.gather(
        *(
            _in_own_unit(s, lambda u: u.mfa.use_recovery_code(alice, HASHES[5]))
            for s in [storage, peer] * 4
        )
    )
    assert results.count(True) == 1


async def test_concurrent_takes_of_one_challenge_through_two_stores_have_one_winner(
    storage: Storage, open_peer: StorageFactory, make: Make
) -> None:
    peer = await open_peer()
    alice = await _user(storage, make)
    challenge = _challenge(alice, "mfa-token")
    await _add(storage, challenge)
    results = await asyncio.gather(
        *(
            _in_own_unit(s, lambda u: u.mfa.take_challenge(challenge.token_hash))
            for s in [storage, peer] * 4
        )
    )
    assert [r for r in results if r is not None] == [challenge]


async def test_claim_attempt_numbers_tries_up_to_the_limit_then_refuses(
    storage: Storage, make: Make
) -> None:
    alice = await _user(storage, make)
    challenge = _challenge(alice, "mfa-token")
    await _add(storage, challenge)
    for expected in (1, 2, 3):
        async with storage.begin() as uow:
            assert await uow.mfa.claim_attempt(challenge.token_hash, 3, T0) == expected
            await uow.commit()
    async with storage.begin() as uow:
        assert await uow.mfa.claim_attempt(challenge.token_hash, 3, T0) is None  # spent
        await uow.commit()
    async with storage.begin() as uow:
        found = await uow.mfa.find_challenge(challenge.token_hash)
    assert found is not None and found.failures == 3  # kept (the caller voids it), unchanged


async def test_claim_attempt_refuses_an_unknown_or_expired_challenge(
    storage: Storage, make: Make
) -> None:
    alice = await _user(storage, make)
    challenge = _challenge(alice, "mfa-token", ttl=60)
    await _add(storage, challenge)
    async with storage.begin() as uow:
        assert await uow.mfa.claim_attempt(hash_token("unknown"), 5, T0) is None
        at_expiry = T0 + timedelta(seconds=60)
        assert await uow.mfa.claim_attempt(challenge.token_hash, 5, at_expiry) is None
        assert await uow.mfa.claim_attempt(challenge.token_hash, 5, at_expiry - timedelta(
            microseconds=1)) == 1  # fmt: skip
        await uow.commit()


async def test_a_claim_not_committed_is_rolled_back(storage: Storage, make: Make) -> None:
    alice = await _user(storage, make)
    challenge = _challenge(alice, "mfa-token")
    await _add(storage, challenge)
    async with storage.begin() as uow:
        assert await uow.mfa.claim_attempt(challenge.token_hash, 5, T0) == 1
    async with storage.begin() as uow:
        assert await uow.mfa.find_challenge(challenge.token_hash) == challenge


async def test_of_many_concurrent_claims_through_two_stores_at_most_the_limit_win(
    storage: Storage, open_peer: StorageFactory, make: Make
) -> None:
    """Count first, then check (docs/reference/mfa-and-passkeys.md): 20 claims at once on one second
    step, half through another store (connection, pool), get the numbers 1..5 once each."""
    peer = await open_peer()
    alice = await _user(storage, make)
    challenge = _challenge(alice, "mfa-token")
    await _add(storage, challenge)
    results = await asyncio.gather(
        *(
            _in_own_unit(s, lambda u: u.mfa.claim_attempt(challenge.token_hash, 5, T0))
            for s in [storage, peer] * 10
        )
    )
    assert sorted(r for r in results if isinstance(r, int)) == [1, 2, 3, 4, 5]
    assert results.count(None) == 15
