"""Invitations (docs/reference/invitations.md): an administrator invites an email into an
organization with a role and groups; the invited person opens the emailed link once and sets a
password (or signs in with an identity provider), which creates the account.

The link's token (256 bits) exists in clear only in the message; the invitation keeps its
SHA-256 (``token_hash``). ``state`` is what was decided (pending, accepted, revoked); whether a
pending invitation has expired is derived from the time (``status``).
"""

from __future__ import annotations

import enum
from datetime import datetime

import attrs

from domain.model import Role

__all__ = ["MAX_INVITATION_GROUPS", "Invitation", "InvitationState", "InvitationStatus"]

MAX_INVITATION_GROUPS = 50
"""The most groups one invitation may name (docs/reference/invitations.md)."""


class InvitationState(enum.StrEnum):
    """What was decided about an invitation: ``pending`` (its link works until
    ``expires_at``), ``accepted`` (the account was created: the link is spent), ``revoked`` (an
    administrator withdrew it)."""

    PENDING = "pending"
    ACCEPTED = "accepted"
    REVOKED = "revoked"


class InvitationStatus(enum.StrEnum):
    """An invitation's ``status`` as shown (docs/reference/invitations.md): its state, with a
    pending invitation past ``expires_at`` shown as ``expired``."""

    PENDING = "pending"
    ACCEPTED = "accepted"
    REVOKED = "revoked"
    EXPIRED = "expired"


@attrs.frozen
class Invitation:
    """An invitation to create an account (docs/reference/invitations.md).

    ``email``: normalized, lower-case; ``role``: the role the account gets; ``group_ids``: the
    groups (of ``org_id``) it joins, in the order given; ``invited_by``: the id of the user who
    invited (or resent it last: the actor of the latest link); ``token_hash``: SHA-256 hex of
    the link's token, never the token; ``expires_at``: the link's end (``auth.invitation_ttl``
    after it was made or resent); ``accepted_user_id``: the account its acceptance created.
    """

    id: str
    org_id: str
    email: str
    role: Role
    group_ids: tuple[str, ...]
    invited_by: str
    created_at: datetime
    expires_at: datetime
    token_hash: str = attrs.field(repr=False)
    state: InvitationState = InvitationState.PENDING
    accepted_user_id: str | None = None

    def status(self, now: datetime) -> InvitationStatus:
        """The state as shown at ``now``: ``expired`` for a pending one at or past
        ``expires_at``."""
        if self.state is InvitationState.PENDING and now >= self.expires_at:
            return InvitationStatus.EXPIRED
        return InvitationStatus(self.state.value)

    def is_open(self, now: datetime) -> bool:
        """True while its link may still be accepted: pending and not expired at ``now``."""
        return self.status(now) is InvitationStatus.PENDING
