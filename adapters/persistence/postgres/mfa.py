"""The PostgreSQL store of second factors (docs/reference/mfa-and-passkeys.md): tables ``mfa_totp``,
``mfa_recovery_codes`` and ``mfa_challenges`` (migration 0006)."""

from __future__ import annotations

from datetime import datetime

import asyncpg

from adapters.persistence.postgres.session import SqlQueries
from adapters.persistence.sql import mfa
from adapters.persistence.sql.purge import EXPIRED
from adapters.persistence.times import require_aware
from application.ports import MfaStore
from domain.errors import Conflict, NotFound
from domain.model import MfaChallenge, TotpCredential


def _totp(row: asyncpg.Record) -> TotpCredential:
    user_id, sealed_secret, confirmed, last_step, created_at = row
    return TotpCredential(user_id, bytes(sealed_secret), confirmed, last_step, created_at)


def _challenge(row: asyncpg.Record) -> MfaChallenge:
    return MfaChallenge(*row)


class PostgresMfaStore(SqlQueries, MfaStore):
    """``MfaStore`` in the current transaction. Each compare-and-set is one ``UPDATE`` or
    ``DELETE`` whose ``WHERE`` re-checks the condition under the row lock: of concurrent
    transactions in any process, the second waits for the first and then finds nothing to
    change."""

    async def put_pending(self, user_id: str, sealed_secret: bytes, now: datetime) -> None:
        """Store a pending secret (replacing a pending one) by an upsert that leaves a confirmed
        row alone. Raises ``Conflict`` if MFA is on, ``NotFound`` if the user does not exist."""
        try:
            stored = await self._run_guarded(
                mfa.PUT_PENDING, user_id, sealed_secret, require_aware(now)
            )
        except asyncpg.ForeignKeyViolationError:
            raise NotFound(f"user {user_id} not found") from None
        if stored == 0:
            raise Conflict("MFA is already on")

    async def get_totp(self, user_id: str) -> TotpCredential | None:
        """The user's secret, pending or confirmed, or None."""
        row = await self._one(mfa.GET_TOTP, user_id)
        return None if row is None else _totp(row)

    async def confirm(self, user_id: str, step: int, recovery_hashes: list[str]) -> bool:
        """Confirm the pending secret and replace the recovery codes; False if none pending."""
        if await self._run(mfa.CONFIRM, step, user_id) == 0:
            return False
        await self._run(mfa.DELETE_CODES, user_id)
        await self._run(
            "INSERT INTO mfa_recovery_codes (user_id, code_hash)"
            " SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING",
            user_id,
            recovery_hashes,
        )
        return True

    async def claim_step(self, user_id: str, step: int) -> bool:
        """``UPDATE ... WHERE last_step < step``: True if this call moved ``last_step``."""
        return await self._run(mfa.CLAIM_STEP, step, user_id) == 1

    async def use_recovery_code(self, user_id: str, code_hash: str) -> bool:
        """Delete the recovery code with this hash; True if it was there."""
        return await self._run(mfa.USE_CODE, user_id, code_hash) == 1

    async def recovery_codes_left(self, user_id: str) -> int:
        """How many unused recovery codes the user has."""
        row = await self._one(mfa.CODES_LEFT, user_id)
        return 0 if row is None else int(row[0])

    async def remove(self, user_id: str) -> bool:
        """Delete the user's secret, recovery codes and second steps; True if MFA was on."""
        row = await self._one(mfa.REMOVE_TOTP, user_id, write=True)
        await self._run(mfa.DELETE_CODES, user_id)
        await self._run(mfa.VOID_CHALLENGES, user_id)
        return row is not None and bool(row[0])

    async def void_challenges(self, user_id: str) -> int:
        """Delete the user's second steps; returns how many."""
        return await self._run(mfa.VOID_CHALLENGES, user_id)

    async def add_challenge(self, challenge: MfaChallenge) -> None:
        """Store a second step. Raises ``Conflict`` (hash exists) or ``NotFound`` (no user)."""
        try:
            await self._run_guarded(
                mfa.INSERT_CHALLENGE,
                challenge.token_hash,
                challenge.user_id,
                require_aware(challenge.expires_at),
                require_aware(challenge.created_at),
                challenge.failures,
                challenge.first_factor,
            )
        except asyncpg.ForeignKeyViolationError:
            raise NotFound(f"user {challenge.user_id} not found") from None
        except asyncpg.UniqueViolationError:
            raise Conflict("mfa token hash exists") from None

    async def find_challenge(self, token_hash: str) -> MfaChallenge | None:
        """The second step with this hash, or None."""
        row = await self._one(mfa.FIND_CHALLENGE, token_hash)
        return None if row is None else _challenge(row)

    async def take_challenge(self, token_hash: str) -> MfaChallenge | None:
        """Delete and return the second step (``DELETE ... RETURNING``), or None."""
        row = await self._one(mfa.TAKE_CHALLENGE, token_hash, write=True)
        return None if row is None else _challenge(row)

    async def claim_attempt(self, token_hash: str, max_attempts: int, now: datetime) -> int | None:
        """``UPDATE ... SET failures = failures + 1 WHERE failures < max AND expires_at > now
        RETURNING failures`` (compare-and-set: a concurrent update of the row waits for its row
        lock and re-checks the WHERE); None if no row qualified."""
        row = await self._one(
            mfa.CLAIM_ATTEMPT, token_hash, max_attempts, require_aware(now), write=True
        )
        return None if row is None else int(row[0])

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete the second steps whose ``expires_at`` <= ``now`` (up to ``limit``); returns
        how many."""
        return await self._purge_where("mfa_challenges", EXPIRED, limit, require_aware(now))
