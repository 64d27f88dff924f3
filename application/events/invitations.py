"""Events of the invitations (docs/reference/invitations.md). Ids and the role only: never the
link's token or its hash."""

from __future__ import annotations

import attrs

from application.events.catalog import Event

__all__ = ["InvitationAccepted", "InvitationCreated", "InvitationResent", "InvitationRevoked"]


@attrs.frozen
class InvitationCreated(Event):
    """``actor_id`` invited an email into ``org_id`` with ``role`` (``invitation.created``)."""

    invitation_id: str
    org_id: str
    actor_id: str
    role: str


@attrs.frozen
class InvitationResent(Event):
    """``actor_id`` sent the invitation again with a new link; the old one is void
    (``invitation.resent``)."""

    invitation_id: str
    org_id: str
    actor_id: str


@attrs.frozen
class InvitationRevoked(Event):
    """``actor_id`` withdrew the invitation; its link is void (``invitation.revoked``)."""

    invitation_id: str
    org_id: str
    actor_id: str


@attrs.frozen
class InvitationAccepted(Event):
    """The invited person accepted: the account ``user_id`` was created in ``org_id``
    (``invitation.accepted``; ``method``: ``password`` or ``federated``)."""

    invitation_id: str
    org_id: str
    user_id: str
    method: str
