"""The SQL store of tokens sent by email (docs/reference/accounts.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from adapters.persistence.sql import email_tokens
from adapters.persistence.sql.purge import EXPIRED
from adapters.persistence.sql.queries import SqlStore
from application.ports import EmailTokenStore
from domain.errors import Conflict, NotFound
from domain.model import EmailToken, EmailTokenPurpose


def _email_token(row: Iterable[Any], when: Callable[[Any], datetime]) -> EmailToken:
    token_hash, user_id, purpose, expires_at, created_at, new_email = row
    return EmailToken(
        token_hash,
        user_id,
        EmailTokenPurpose(purpose),
        when(expires_at),
        when(created_at),
        new_email,
    )


class SqlEmailTokenStore(SqlStore, EmailTokenStore):
    """``EmailTokenStore`` in the current transaction (table ``email_tokens``)."""

    async def add(self, token: EmailToken) -> None:
        """Store a token. Raises ``Conflict`` (hash exists) or ``NotFound`` (no such user)."""
        try:
            await self._q.execute(
                email_tokens.INSERT,
                (
                    token.token_hash,
                    token.user_id,
                    token.purpose.value,
                    self._d.to_db(token.expires_at),
                    self._d.to_db(token.created_at),
                    token.new_email,
                ),
                guarded=True,
            )
        except Exception as exc:
            if self._d.is_foreign_key_violation(exc):
                raise NotFound(f"user {token.user_id} not found") from None
            if self._d.is_unique_violation(exc):
                raise Conflict("email token hash exists") from None
            raise

    async def find(self, token_hash: str, purpose: EmailTokenPurpose) -> EmailToken | None:
        """The token with this hash and purpose, or None."""
        row = await self._q.one(email_tokens.FIND, (token_hash, purpose.value))
        return None if row is None else _email_token(row, self._d.from_db)

    async def take(self, token_hash: str, purpose: EmailTokenPurpose) -> EmailToken | None:
        """Delete and return the token (``DELETE ... RETURNING``), or None."""
        row = await self._q.one(email_tokens.TAKE, (token_hash, purpose.value), write=True)
        return None if row is None else _email_token(row, self._d.from_db)

    async def void(self, user_id: str, purpose: EmailTokenPurpose) -> int:
        """Delete every token of the user with this purpose; returns how many."""
        return await self._q.execute(email_tokens.VOID, (user_id, purpose.value))

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete expired tokens (up to ``limit``); returns how many."""
        return await self._q.purge("email_tokens", EXPIRED, (self._d.to_db(now),), limit)
