"""The SQLite store of second factors (docs/reference/mfa-and-passkeys.md): tables ``mfa_totp``,
``mfa_recovery_codes`` and ``mfa_challenges`` (migration 0006)."""

# Only placeholders are interpolated into SQL; values are always bound.
# ruff: noqa: S608

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from adapters.persistence.sql import mfa
from adapters.persistence.sql.purge import EXPIRED
from adapters.persistence.sqlite.rows import is_foreign_key
from adapters.persistence.sqlite.unit import SqlQueries
from adapters.persistence.times import from_micros, to_micros
from application.ports import MfaStore
from domain.errors import Conflict, NotFound
from domain.model import MfaChallenge, TotpCredential


def _totp(row: Iterable[Any]) -> TotpCredential:
    user_id, sealed_secret, confirmed, last_step, created_at = row
    return TotpCredential(
        user_id, bytes(sealed_secret), bool(confirmed), last_step, from_micros(created_at)
    )


def _challenge(row: Iterable[Any]) -> MfaChallenge:
    token_hash, user_id, expires_at, created_at, failures, first_factor = row
    return MfaChallenge(
        token_hash, user_id, from_micros(expires_at), from_micros(created_at), failures,
        first_factor,
    )  # fmt: skip


class SqliteMfaStore(SqlQueries, MfaStore):
    """``MfaStore`` in the current transaction. Each compare-and-set is one statement inside
    the unit's ``BEGIN IMMEDIATE`` transaction, which holds SQLite's write lock: concurrent
    units, in this process or another, run their claims one after the other."""

    async def put_pending(self, user_id: str, sealed_secret: bytes, now: datetime) -> None:
        """Store a pending secret (replacing a pending one) by an upsert that leaves a confirmed
        row alone. Raises ``Conflict`` if MFA is on, ``NotFound`` if the user does not exist."""
        try:
            stored = await self._count(mfa.PUT_PENDING, (user_id, sealed_secret, to_micros(now)))
        except sqlite3.IntegrityError as exc:
            if is_foreign_key(exc):
                raise NotFound(f"user {user_id} not found") from None
            raise
        if stored == 0:
            raise Conflict("MFA is already on")

    async def get_totp(self, user_id: str) -> TotpCredential | None:
        """The user's secret, pending or confirmed, or None."""
        row = await self._one(mfa.GET_TOTP, (user_id,))
        return None if row is None else _totp(row)

    async def confirm(self, user_id: str, step: int, recovery_hashes: list[str]) -> bool:
        """Confirm the pending secret and replace the recovery codes; False if none pending."""
        if await self._count(mfa.CONFIRM, (step, user_id)) == 0:
            return False
        await self._count(mfa.DELETE_CODES, (user_id,))
        if recovery_hashes:
            rows = ", ".join("(?, ?)" for _ in recovery_hashes)
            params = [value for code_hash in recovery_hashes for value in (user_id, code_hash)]
            await self._count(
                f"INSERT INTO mfa_recovery_codes (user_id, code_hash) VALUES {rows}"
                " ON CONFLICT DO NOTHING",
                params,
            )
        return True

    async def claim_step(self, user_id: str, step: int) -> bool:
        """``UPDATE ... WHERE last_step < step``: True if this call moved ``last_step``."""
        return await self._count(mfa.CLAIM_STEP, (step, user_id)) == 1

    async def use_recovery_code(self, user_id: str, code_hash: str) -> bool:
        """Delete the recovery code with this hash; True if it was there."""
        return await self._count(mfa.USE_CODE, (user_id, code_hash)) == 1

    async def recovery_codes_left(self, user_id: str) -> int:
        """How many unused recovery codes the user has."""
        row = await self._one(mfa.CODES_LEFT, (user_id,))
        return int(row[0])

    async def remove(self, user_id: str) -> bool:
        """Delete the user's secret, recovery codes and second steps; True if MFA was on."""
        row = await self._one(mfa.REMOVE_TOTP, (user_id,))
        await self._count(mfa.DELETE_CODES, (user_id,))
        await self._count(mfa.VOID_CHALLENGES, (user_id,))
        return row is not None and bool(row[0])

    async def void_challenges(self, user_id: str) -> int:
        """Delete the user's second steps; returns how many."""
        return await self._count(mfa.VOID_CHALLENGES, (user_id,))

    async def add_challenge(self, challenge: MfaChallenge) -> None:
        """Store a second step. Raises ``Conflict`` (hash exists) or ``NotFound`` (no user)."""
        try:
            await self._count(
                mfa.INSERT_CHALLENGE,
                (
                    challenge.token_hash,
                    challenge.user_id,
                    to_micros(challenge.expires_at),
                    to_micros(challenge.created_at),
                    challenge.failures,
                    challenge.first_factor,
                ),
            )
        except sqlite3.IntegrityError as exc:
            if is_foreign_key(exc):
                raise NotFound(f"user {challenge.user_id} not found") from None
            raise Conflict("mfa token hash exists") from None

    async def find_challenge(self, token_hash: str) -> MfaChallenge | None:
        """The second step with this hash, or None."""
        row = await self._one(mfa.FIND_CHALLENGE, (token_hash,))
        return None if row is None else _challenge(row)

    async def take_challenge(self, token_hash: str) -> MfaChallenge | None:
        """Delete and return the second step (``DELETE ... RETURNING``), or None."""
        row = await self._one(mfa.TAKE_CHALLENGE, (token_hash,))
        return None if row is None else _challenge(row)

    async def claim_attempt(self, token_hash: str, max_attempts: int, now: datetime) -> int | None:
        """``UPDATE ... SET failures = failures + 1 WHERE failures < max AND expires_at > now
        RETURNING failures`` (compare-and-set); None if no row qualified."""
        row = await self._one(mfa.CLAIM_ATTEMPT, (token_hash, max_attempts, to_micros(now)))
        return None if row is None else int(row[0])

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete the second steps whose ``expires_at`` <= ``now`` (up to ``limit``); returns
        how many."""
        return await self._purge_where("mfa_challenges", EXPIRED, (to_micros(now),), limit)
