"""The in-memory store of tokens sent by email (docs/reference/accounts.md) over a unit's working
copy."""

from __future__ import annotations

from datetime import datetime

from adapters.persistence.memory.unit import MemoryUnit
from adapters.persistence.times import require_aware
from application.ports import EmailTokenStore
from domain.errors import Conflict, NotFound
from domain.model import EmailToken, EmailTokenPurpose


class MemoryEmailTokenStore(EmailTokenStore):
    """``EmailTokenStore`` over the working copy (tokens keyed by hash)."""

    def __init__(self, stage: MemoryUnit) -> None:
        self._s = stage

    async def add(self, token: EmailToken) -> None:
        """Store a token. Raises ``Conflict`` (hash exists) or ``NotFound`` (no such user)."""
        require_aware(token.expires_at)
        require_aware(token.created_at)
        if token.user_id not in self._s.view.users:
            raise NotFound(f"user {token.user_id} not found")
        if token.token_hash in self._s.view.email_tokens:
            raise Conflict("email token hash exists")
        self._s.write("email_tokens")[token.token_hash] = token

    async def find(self, token_hash: str, purpose: EmailTokenPurpose) -> EmailToken | None:
        """The token with this hash and purpose, or None."""
        token = self._s.view.email_tokens.get(token_hash)
        return token if token is not None and token.purpose == purpose else None

    async def take(self, token_hash: str, purpose: EmailTokenPurpose) -> EmailToken | None:
        """Delete and return the token, or None."""
        token = await self.find(token_hash, purpose)
        if token is not None:
            del self._s.write("email_tokens")[token_hash]
        return token

    async def void(self, user_id: str, purpose: EmailTokenPurpose) -> int:
        """Delete every token of the user with this purpose; returns how many."""
        gone = [
            h
            for h, t in self._s.view.email_tokens.items()
            if t.user_id == user_id and t.purpose == purpose
        ]
        if gone:
            table = self._s.write("email_tokens")
            for h in gone:
                del table[h]
        return len(gone)

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) expired tokens; returns how many."""
        require_aware(now)
        return self._s.purge("email_tokens", lambda t: t.is_expired(now), limit)
