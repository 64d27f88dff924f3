"""The in-memory invitation store (docs/reference/invitations.md)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import attrs

from adapters.persistence.memory.unit import MemoryUnit
from adapters.persistence.times import require_aware
from application.ports import InvitationRepo
from domain.errors import Conflict
from domain.invitations import Invitation, InvitationState


class MemoryInvitationRepo(InvitationRepo):
    """``InvitationRepo`` over the working copy (keyed by id); the unit's lock makes each
    conditional update atomic."""

    def __init__(self, stage: MemoryUnit) -> None:
        self._s = stage

    async def add(self, invitation: Invitation) -> None:
        """Insert; ``Conflict`` when the id or the token hash exists."""
        require_aware(invitation.created_at)
        require_aware(invitation.expires_at)
        table = self._s.view.invitations
        if invitation.id in table or await self.find_by_token(invitation.token_hash):
            raise Conflict("invitation exists")
        self._s.write("invitations")[invitation.id] = invitation

    async def get(self, invitation_id: str) -> Invitation | None:
        """The invitation, or None."""
        return self._s.view.invitations.get(invitation_id)

    async def find_by_token(self, token_hash: str) -> Invitation | None:
        """The invitation of this link, or None."""
        for invitation in self._s.view.invitations.values():
            if invitation.token_hash == token_hash:
                return invitation
        return None

    async def find_open(self, org_id: str, email: str, now: datetime) -> Invitation | None:
        """A live pending invitation of ``email`` into ``org_id``, or None."""
        require_aware(now)
        for invitation in self._s.view.invitations.values():
            if (
                invitation.org_id == org_id
                and invitation.email == email
                and invitation.is_open(now)
            ):
                return invitation
        return None

    async def list_page(
        self, org_id: str | None, after: str | None, limit: int
    ) -> list[Invitation]:
        """Invitations with ``id > after`` of ``org_id`` (None: all), ordered by id."""
        rows = sorted(
            (i for i in self._s.view.invitations.values()
             if (org_id is None or i.org_id == org_id) and (after is None or i.id > after)),
            key=lambda i: i.id,
        )  # fmt: skip
        return rows[: max(0, limit)]

    def _change(
        self, invitation_id: str, change: Callable[[Invitation], Invitation]
    ) -> Invitation | None:
        found: Invitation | None = self._s.view.invitations.get(invitation_id)
        if found is None or found.state is not InvitationState.PENDING:
            return None
        changed = change(found)
        self._s.write("invitations")[invitation_id] = changed
        return changed

    async def renew(
        self, invitation_id: str, token_hash: str, expires_at: datetime, invited_by: str
    ) -> Invitation | None:
        """A new link and expiry for a pending invitation; None when it is not pending."""
        require_aware(expires_at)
        other = await self.find_by_token(token_hash)
        if other is not None and other.id != invitation_id:
            raise Conflict("invitation exists")
        return self._change(
            invitation_id,
            lambda i: attrs.evolve(
                i, token_hash=token_hash, expires_at=expires_at, invited_by=invited_by
            ),
        )

    async def revoke(self, invitation_id: str) -> Invitation | None:
        """Revoke a pending invitation; None when it is not pending."""
        return self._change(invitation_id, lambda i: attrs.evolve(i, state=InvitationState.REVOKED))

    async def accept(self, token_hash: str, user_id: str, now: datetime) -> Invitation | None:
        """Accept the live pending invitation of this link; None when there is none."""
        require_aware(now)
        found = await self.find_by_token(token_hash)
        if found is None or not found.is_open(now):
            return None
        return self._change(
            found.id,
            lambda i: attrs.evolve(i, state=InvitationState.ACCEPTED, accepted_user_id=user_id),
        )
