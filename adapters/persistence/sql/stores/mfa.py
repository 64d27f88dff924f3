"""The SQL store of second factors (docs/reference/mfa-and-passkeys.md): tables ``mfa_totp``,
``mfa_recovery_codes`` and ``mfa_challenges`` (migration 0006)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from adapters.persistence.sql import mfa
from adapters.persistence.sql.purge import EXPIRED
from adapters.persistence.sql.queries import SqlStore
from application.ports import MfaStore
from domain.errors import Conflict, NotFound
from domain.model import MfaChallenge, TotpCredential


def _totp(row: Iterable[Any], when: Callable[[Any], datetime]) -> TotpCredential:
    user_id, sealed_secret, confirmed, last_step, created_at = row
    return TotpCredential(
        user_id, bytes(sealed_secret), bool(confirmed), last_step, when(created_at)
    )


def _challenge(row: Iterable[Any], when: Callable[[Any], datetime]) -> MfaChallenge:
    token_hash, user_id, expires_at, created_at, failures, first_factor = row
    return MfaChallenge(
        token_hash, user_id, when(expires_at), when(created_at), failures, first_factor
    )


class SqlMfaStore(SqlStore, MfaStore):
    """``MfaStore`` in the current transaction. Each compare-and-set is one statement: on
    SQLite inside the unit's ``BEGIN IMMEDIATE`` transaction, which holds the write lock; on
    PostgreSQL one ``UPDATE`` or ``DELETE`` whose ``WHERE`` re-checks the condition under the
    row lock. Of concurrent units, in any process, the second finds nothing to change."""

    async def put_pending(self, user_id: str, sealed_secret: bytes, now: datetime) -> None:
        """Store a pending secret (replacing a pending one) by an upsert that leaves a confirmed
        row alone. Raises ``Conflict`` if MFA is on, ``NotFound`` if the user does not exist."""
        try:
            stored = await self._q.execute(
                mfa.PUT_PENDING, (user_id, sealed_secret, self._d.to_db(now)), guarded=True
            )
        except Exception as exc:
            if self._d.is_foreign_key_violation(exc):
                raise NotFound(f"user {user_id} not found") from None
            raise
        if stored == 0:
            raise Conflict("MFA is already on")

    async def get_totp(self, user_id: str) -> TotpCredential | None:
        """The user's secret, pending or confirmed, or None."""
        row = await self._q.one(mfa.GET_TOTP, (user_id,))
        return None if row is None else _totp(row, self._d.from_db)

    async def confirm(self, user_id: str, step: int, recovery_hashes: list[str]) -> bool:
        """Confirm the pending secret and replace the recovery codes; False if none pending."""
        if await self._q.execute(mfa.CONFIRM, (step, user_id)) == 0:
            return False
        await self._q.execute(mfa.DELETE_CODES, (user_id,))
        if recovery_hashes:
            await self._q.execute(
                mfa.insert_codes(len(recovery_hashes)), (user_id, *recovery_hashes)
            )
        return True

    async def replace_recovery_codes(self, user_id: str, recovery_hashes: list[str]) -> bool:
        """Lock the confirmed secret, then replace the codes; False (nothing changed) if none."""
        if await self._q.execute(mfa.LOCK_CONFIRMED, (user_id,)) == 0:
            return False
        await self._q.execute(mfa.DELETE_CODES, (user_id,))
        if recovery_hashes:
            await self._q.execute(
                mfa.insert_codes(len(recovery_hashes)), (user_id, *recovery_hashes)
            )
        return True

    async def claim_step(self, user_id: str, step: int) -> bool:
        """``UPDATE ... WHERE last_step < step``: True if this call moved ``last_step``."""
        return await self._q.execute(mfa.CLAIM_STEP, (step, user_id)) == 1

    async def use_recovery_code(self, user_id: str, code_hash: str) -> bool:
        """Delete the recovery code with this hash; True if it was there."""
        return await self._q.execute(mfa.USE_CODE, (user_id, code_hash)) == 1

    async def recovery_codes_left(self, user_id: str) -> int:
        """How many unused recovery codes the user has."""
        row = await self._q.one(mfa.CODES_LEFT, (user_id,))
        return 0 if row is None else int(row[0])

    async def remove(self, user_id: str) -> bool:
        """Delete the user's secret, recovery codes and second steps; True if MFA was on."""
        row = await self._q.one(mfa.REMOVE_TOTP, (user_id,), write=True)
        await self._q.execute(mfa.DELETE_CODES, (user_id,))
        await self._q.execute(mfa.VOID_CHALLENGES, (user_id,))
        return row is not None and bool(row[0])

    async def void_challenges(self, user_id: str) -> int:
        """Delete the user's second steps; returns how many."""
        return await self._q.execute(mfa.VOID_CHALLENGES, (user_id,))

    async def add_challenge(self, challenge: MfaChallenge) -> None:
        """Store a second step. Raises ``Conflict`` (hash exists) or ``NotFound`` (no user)."""
        try:
            await self._q.execute(
                mfa.INSERT_CHALLENGE,
                (
                    challenge.token_hash,
                    challenge.user_id,
                    self._d.to_db(challenge.expires_at),
                    self._d.to_db(challenge.created_at),
                    challenge.failures,
                    challenge.first_factor,
                ),
                guarded=True,
            )
        except Exception as exc:
            if self._d.is_foreign_key_violation(exc):
                raise NotFound(f"user {challenge.user_id} not found") from None
            if self._d.is_unique_violation(exc):
                raise Conflict("mfa token hash exists") from None
            raise

    async def find_challenge(self, token_hash: str) -> MfaChallenge | None:
        """The second step with this hash, or None."""
        row = await self._q.one(mfa.FIND_CHALLENGE, (token_hash,))
        return None if row is None else _challenge(row, self._d.from_db)

    async def take_challenge(self, token_hash: str) -> MfaChallenge | None:
        """Delete and return the second step (``DELETE ... RETURNING``), or None."""
        row = await self._q.one(mfa.TAKE_CHALLENGE, (token_hash,), write=True)
        return None if row is None else _challenge(row, self._d.from_db)

    async def claim_attempt(self, token_hash: str, max_attempts: int, now: datetime) -> int | None:
        """``UPDATE ... SET failures = failures + 1 WHERE failures < max AND expires_at > now
        RETURNING failures`` (compare-and-set); None if no row qualified."""
        row = await self._q.one(
            mfa.CLAIM_ATTEMPT, (token_hash, max_attempts, self._d.to_db(now)), write=True
        )
        return None if row is None else int(row[0])

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete the second steps whose ``expires_at`` <= ``now`` (up to ``limit``); returns
        how many."""
        return await self._q.purge("mfa_challenges", EXPIRED, (self._d.to_db(now),), limit)
