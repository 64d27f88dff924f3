"""The SQL invitation store (``docs/reference/invitations.md``): table ``invitations``
(migration 0021)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from adapters.persistence.rows.invitations import invitation_params, invitation_row
from adapters.persistence.sql import invitations
from adapters.persistence.sql.paging import keyset_args
from adapters.persistence.sql.queries import SqlStore
from application.ports import InvitationRepo
from domain.errors import Conflict
from domain.invitations import Invitation, InvitationState

_PENDING = InvitationState.PENDING.value


class SqlInvitationRepo(SqlStore, InvitationRepo):
    """``InvitationRepo`` in the current transaction; each state change is one conditional
    ``UPDATE ... RETURNING``."""

    def _row(self, row: Sequence[Any] | None) -> Invitation | None:
        return None if row is None else invitation_row(row, self._d.from_db)

    async def add(self, invitation: Invitation) -> None:
        """Insert; ``Conflict`` when the id or the token hash exists."""
        try:
            await self._q.execute(
                invitations.INSERT, invitation_params(invitation, self._d.to_db), guarded=True
            )
        except Exception as exc:
            if self._d.is_unique_violation(exc):
                raise Conflict("invitation exists") from None
            raise

    async def get(self, invitation_id: str) -> Invitation | None:
        """The invitation, or None."""
        return self._row(await self._q.one(invitations.BY_ID, (invitation_id,)))

    async def find_by_token(self, token_hash: str) -> Invitation | None:
        """The invitation of this link, or None."""
        return self._row(await self._q.one(invitations.BY_TOKEN, (token_hash,)))

    async def find_open(self, org_id: str, email: str, now: datetime) -> Invitation | None:
        """A live pending invitation of ``email`` into ``org_id``, or None."""
        params = (org_id, email, _PENDING, self._d.to_db(now))
        return self._row(await self._q.one(invitations.OPEN, params))

    async def list_page(
        self, org_id: str | None, after: str | None, limit: int
    ) -> list[Invitation]:
        """Invitations with ``id > after`` of ``org_id`` (None: all), ordered by id."""
        rows = await self._q.all(
            invitations.page(by_org=org_id is not None, after=after is not None),
            keyset_args(org_id, after, limit),
        )
        return [invitation_row(r, self._d.from_db) for r in rows]

    async def renew(
        self, invitation_id: str, token_hash: str, expires_at: datetime, invited_by: str
    ) -> Invitation | None:
        """A new link and expiry for a pending invitation; None when it is not pending."""
        params = (invitation_id, token_hash, self._d.to_db(expires_at), invited_by, _PENDING)
        try:
            row = await self._q.one(invitations.RENEW, params, write=True)
        except Exception as exc:
            if self._d.is_unique_violation(exc):
                raise Conflict("invitation exists") from None
            raise
        return self._row(row)

    async def revoke(self, invitation_id: str) -> Invitation | None:
        """Revoke a pending invitation; None when it is not pending."""
        params = (invitation_id, InvitationState.REVOKED.value, _PENDING)
        return self._row(await self._q.one(invitations.REVOKE, params, write=True))

    async def accept(self, token_hash: str, user_id: str, now: datetime) -> Invitation | None:
        """Accept the live pending invitation of this link; None when there is none."""
        params = (token_hash, InvitationState.ACCEPTED.value, user_id, _PENDING,
                  self._d.to_db(now))  # fmt: skip
        return self._row(await self._q.one(invitations.ACCEPT, params, write=True))
