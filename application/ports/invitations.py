"""The port of the invitations (docs/reference/invitations.md): ``InvitationRepo``, inside one
unit of work. See ``application.ports`` for the conventions every port follows."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from domain.invitations import Invitation


class InvitationRepo(Protocol):
    """Invitations keyed by id, each with a unique link token hash. The state changes are
    conditional updates (compare-and-set on ``state = pending``), so that of any number of
    concurrent acceptances of one link, in any process or instance, exactly one wins."""

    async def add(self, invitation: Invitation) -> None:
        """Store a new invitation. Raises ``Conflict`` when its id or token hash exists."""
        ...

    async def get(self, invitation_id: str) -> Invitation | None:
        """The invitation ``invitation_id``, or None."""
        ...

    async def find_by_token(self, token_hash: str) -> Invitation | None:
        """The invitation whose link has the SHA-256 ``token_hash``, in any state, or None."""
        ...

    async def find_open(self, org_id: str, email: str, now: datetime) -> Invitation | None:
        """A pending invitation of ``email`` into ``org_id`` not expired at ``now``, or None."""
        ...

    async def list_page(
        self, org_id: str | None, after: str | None, limit: int
    ) -> list[Invitation]:
        """Up to ``limit`` invitations with ``id > after`` (all if None) of ``org_id`` (None:
        every organization), ordered by id."""
        ...

    async def renew(
        self, invitation_id: str, token_hash: str, expires_at: datetime, invited_by: str
    ) -> Invitation | None:
        """Give a pending invitation a new link (``token_hash``; the old one stops working) and
        ``expires_at``, sent by ``invited_by``; the renewed invitation, or None when it is not
        pending (accepted or revoked). An expired pending invitation is renewed."""
        ...

    async def revoke(self, invitation_id: str) -> Invitation | None:
        """Set a pending invitation (expired or not) ``revoked``; the revoked invitation, or None
        when it is not pending."""
        ...

    async def accept(self, token_hash: str, user_id: str, now: datetime) -> Invitation | None:
        """In one conditional update: the pending invitation of link ``token_hash`` live at
        ``now`` becomes ``accepted`` by the new account ``user_id``; the accepted invitation, or
        None when there is no such invitation (unknown, expired, revoked, accepted already — a
        concurrent acceptance included). Raises ``ValueError`` for a naive ``now``."""
        ...
