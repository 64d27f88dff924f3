"""The PostgreSQL store of tokens sent by email (docs/reference/accounts.md)."""

from __future__ import annotations

from datetime import datetime

import asyncpg

from adapters.persistence.postgres.session import SqlQueries
from adapters.persistence.sql import email_tokens
from adapters.persistence.sql.purge import EXPIRED
from adapters.persistence.times import require_aware
from application.ports import EmailTokenStore
from domain.errors import Conflict, NotFound
from domain.model import EmailToken, EmailTokenPurpose


def _email_token(row: asyncpg.Record) -> EmailToken:
    token_hash, user_id, purpose, expires_at, created_at = row
    return EmailToken(token_hash, user_id, EmailTokenPurpose(purpose), expires_at, created_at)


class PostgresEmailTokenStore(SqlQueries, EmailTokenStore):
    """``EmailTokenStore`` in the current transaction (table ``email_tokens``)."""

    async def add(self, token: EmailToken) -> None:
        """Store a token. Raises ``Conflict`` (hash exists) or ``NotFound`` (no such user)."""
        try:
            await self._run_guarded(
                email_tokens.INSERT,
                token.token_hash,
                token.user_id,
                token.purpose.value,
                require_aware(token.expires_at),
                require_aware(token.created_at),
            )
        except asyncpg.ForeignKeyViolationError:
            raise NotFound(f"user {token.user_id} not found") from None
        except asyncpg.UniqueViolationError:
            raise Conflict("email token hash exists") from None

    async def find(self, token_hash: str, purpose: EmailTokenPurpose) -> EmailToken | None:
        """The token with this hash and purpose, or None."""
        row = await self._one(email_tokens.FIND, token_hash, purpose.value)
        return None if row is None else _email_token(row)

    async def take(self, token_hash: str, purpose: EmailTokenPurpose) -> EmailToken | None:
        """Delete and return the token (``DELETE ... RETURNING``), or None."""
        row = await self._one(email_tokens.TAKE, token_hash, purpose.value, write=True)
        return None if row is None else _email_token(row)

    async def void(self, user_id: str, purpose: EmailTokenPurpose) -> int:
        """Delete every token of the user with this purpose; returns how many."""
        return await self._run(email_tokens.VOID, user_id, purpose.value)

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete expired tokens (up to ``limit``); returns how many."""
        return await self._purge_where("email_tokens", EXPIRED, limit, require_aware(now))
