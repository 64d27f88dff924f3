"""Accepting an invitation with another provider's identity (docs/reference/invitations.md,
docs/reference/federation.md): the account is the invitation's — its email (verified: the link
reached it), role, organization and groups, whatever the provider says of the email — with the
identity linked to it, signed in; in one unit of work with spending the link
(``InvitationAcceptance.accept``). The provider's checks ran before (``FederatedLogin``'s
callback); the invitation stands for ``create_users`` and ``allowed_domains``: an administrator
asked for this account.
"""

from __future__ import annotations

from typing import TypeVar

from application.events.catalog import Event
from application.events.federation import IdentityLinked
from application.login.finish import LoginStart
from application.login.invitation import InvitationAcceptance
from application.ports import UnitOfWork
from domain import errors
from domain.federation import FederatedIdentity, UpstreamIdentity
from domain.model import User

__all__ = ["HOW", "accept_with_identity"]

T = TypeVar("T")
HOW = "invitation"
"""``identity.linked``'s ``details.how`` for an identity linked by accepting an invitation."""
METHOD = "federated"


async def accept_with_identity(
    acceptance: InvitationAcceptance, provider_id: str, who: UpstreamIdentity,
    email: str | None, token_hash: str, start: LoginStart[T],
) -> T:  # fmt: skip
    """Accept the invitation of ``token_hash`` as ``who`` of ``provider_id`` (``email``: the
    provider's, normalized, kept on the identity) and sign the new account in with ``start``
    (method ``federated``). Raises ``InvalidInvitation`` (the link is no longer pending),
    ``AccountExists`` (``who`` belongs to an account already), ``EmailTaken``; then nothing is
    created."""
    invitation = await acceptance.open_hash(token_hash)
    user = acceptance.new_user(invitation, password_hash="")

    async def link(uow: UnitOfWork, new: User) -> list[Event]:
        identity = FederatedIdentity(who.issuer, who.subject, provider_id, new.id, email,
                                     new.created_at, new.created_at,
                                     email_was_verified=True)  # fmt: skip
        try:
            await uow.identities.add(identity)
        except errors.Conflict:
            raise errors.AccountExists("this identity belongs to an account already") from None
        return [IdentityLinked(new.id, provider_id, HOW)]

    return await acceptance.accept(invitation.token_hash, user, METHOD, start, link=link)
