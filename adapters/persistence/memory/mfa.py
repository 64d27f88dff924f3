"""The in-memory store of second factors (docs/reference/mfa-and-passkeys.md) over a unit's working
copy."""

from __future__ import annotations

from datetime import datetime

import attrs

from adapters.persistence.memory.unit import MemoryUnit
from adapters.persistence.times import require_aware
from application.ports import MfaStore
from domain.errors import Conflict, NotFound
from domain.model import MfaChallenge, TotpCredential


class MemoryMfaStore(MfaStore):
    """``MfaStore`` over the working copy: TOTP secrets by user id, recovery code hashes as a
    frozenset per user id, second steps by token hash. Units run one at a time (the storage's
    lock), which makes every compare-and-set here atomic."""

    def __init__(self, stage: MemoryUnit) -> None:
        self._s = stage

    def _require_user(self, user_id: str) -> None:
        if user_id not in self._s.view.users:
            raise NotFound(f"user {user_id} not found")

    async def put_pending(self, user_id: str, sealed_secret: bytes, now: datetime) -> None:
        """Store a pending secret (replacing a pending one). Raises ``Conflict`` if MFA is on,
        ``NotFound`` if the user does not exist."""
        require_aware(now)
        self._require_user(user_id)
        current = self._s.view.mfa_totp.get(user_id)
        if current is not None and current.confirmed:
            raise Conflict("MFA is already on")
        self._s.write("mfa_totp")[user_id] = TotpCredential(
            user_id, sealed_secret, confirmed=False, last_step=None, created_at=now
        )

    async def get_totp(self, user_id: str) -> TotpCredential | None:
        """The user's secret, pending or confirmed, or None."""
        return self._s.view.mfa_totp.get(user_id)

    async def confirm(self, user_id: str, step: int, recovery_hashes: list[str]) -> bool:
        """Confirm the pending secret and replace the recovery codes; False if none pending."""
        current = self._s.view.mfa_totp.get(user_id)
        if current is None or current.confirmed:
            return False
        self._s.write("mfa_totp")[user_id] = attrs.evolve(current, confirmed=True, last_step=step)
        self._s.write("mfa_recovery")[user_id] = frozenset(recovery_hashes)
        return True

    async def replace_recovery_codes(self, user_id: str, recovery_hashes: list[str]) -> bool:
        """Replace the recovery codes if the secret is confirmed; False (nothing changed) if
        not."""
        current = self._s.view.mfa_totp.get(user_id)
        if current is None or not current.confirmed:
            return False
        self._s.write("mfa_recovery")[user_id] = frozenset(recovery_hashes)
        return True

    async def claim_step(self, user_id: str, step: int) -> bool:
        """Set ``last_step`` to ``step`` if confirmed and older; True if it was set."""
        current = self._s.view.mfa_totp.get(user_id)
        if current is None or not current.confirmed:
            return False
        if current.last_step is not None and current.last_step >= step:
            return False
        self._s.write("mfa_totp")[user_id] = attrs.evolve(current, last_step=step)
        return True

    async def use_recovery_code(self, user_id: str, code_hash: str) -> bool:
        """Delete the recovery code with this hash; True if it was there."""
        codes = self._s.view.mfa_recovery.get(user_id, frozenset())
        if code_hash not in codes:
            return False
        self._s.write("mfa_recovery")[user_id] = codes - {code_hash}
        return True

    async def recovery_codes_left(self, user_id: str) -> int:
        """How many unused recovery codes the user has."""
        return len(self._s.view.mfa_recovery.get(user_id, ()))

    async def remove(self, user_id: str) -> bool:
        """Delete the user's secret, recovery codes and second steps; True if MFA was on."""
        current = self._s.view.mfa_totp.get(user_id)
        if current is not None:
            del self._s.write("mfa_totp")[user_id]
        if user_id in self._s.view.mfa_recovery:
            del self._s.write("mfa_recovery")[user_id]
        await self.void_challenges(user_id)
        return current is not None and current.confirmed

    async def void_challenges(self, user_id: str) -> int:
        """Delete the user's second steps; returns how many."""
        gone = [h for h, c in self._s.view.mfa_challenges.items() if c.user_id == user_id]
        if gone:
            table = self._s.write("mfa_challenges")
            for h in gone:
                del table[h]
        return len(gone)

    async def add_challenge(self, challenge: MfaChallenge) -> None:
        """Store a second step. Raises ``Conflict`` (hash exists) or ``NotFound`` (no user)."""
        require_aware(challenge.expires_at)
        require_aware(challenge.created_at)
        self._require_user(challenge.user_id)
        if challenge.token_hash in self._s.view.mfa_challenges:
            raise Conflict("mfa token hash exists")
        self._s.write("mfa_challenges")[challenge.token_hash] = challenge

    async def find_challenge(self, token_hash: str) -> MfaChallenge | None:
        """The second step with this hash, or None."""
        return self._s.view.mfa_challenges.get(token_hash)

    async def take_challenge(self, token_hash: str) -> MfaChallenge | None:
        """Delete and return the second step with this hash, or None."""
        challenge = self._s.view.mfa_challenges.get(token_hash)
        if challenge is not None:
            del self._s.write("mfa_challenges")[token_hash]
        return challenge

    async def claim_attempt(self, token_hash: str, max_attempts: int, now: datetime) -> int | None:
        """``failures + 1`` if the step is live and below ``max_attempts``; else None."""
        require_aware(now)
        challenge = self._s.view.mfa_challenges.get(token_hash)
        if challenge is None or challenge.is_expired(now) or challenge.failures >= max_attempts:
            return None
        claimed = challenge.failures + 1
        self._s.write("mfa_challenges")[token_hash] = attrs.evolve(challenge, failures=claimed)
        return claimed

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) second steps whose ``expires_at`` <= ``now``; returns how
        many."""
        require_aware(now)
        return self._s.purge("mfa_challenges", lambda c: c.is_expired(now), limit)
