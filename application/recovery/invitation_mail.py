"""The invitation's message (docs/reference/invitations.md): composed here, sent by the
``Outbox`` of ``application.recovery.mail`` after the commit, off the request's path; a failure
to send is logged and counted (kind ``invitation``), never answered.

The link is ``{auth.issuer}/ui/invitation?token={token}``, the hosted page that accepts it.
"""

from __future__ import annotations

from urllib.parse import quote

from application.ports import MailDraft
from application.recovery.mail import Outbox
from application.shared.settings import AuthSettings, Live
from domain.invitations import Invitation
from domain.texts import Text

__all__ = ["INVITATION", "InvitationMailer", "compose_invitation", "invitation_link"]

INVITATION = "invitation"
"""``MailDraft.kind`` of an invitation (templates ``mail/invitation.*``)."""
SUBJECT = Text("You are invited to create an account")
"""The invitation's subject, translated in the message's language."""


def invitation_link(issuer: str, token: str) -> str:
    """``{issuer}/ui/invitation?token={token}`` (the token URL-quoted)."""
    return f"{issuer.rstrip('/')}/ui/invitation?token={quote(token, safe='')}"


def compose_invitation(invitation: Invitation, token: str, issuer: str, ttl: int,
                       locale: str = "") -> MailDraft:  # fmt: skip
    """The draft to ``invitation.email`` in ``locale`` (empty: the default; the recipient has
    no account, so no language of theirs is known) with the link of ``token``, for the
    templates ``mail/invitation.*``: ``org`` (the organization's id), ``role`` (its value) and
    ``ttl`` (seconds the link works, once)."""
    return MailDraft(kind=INVITATION, to=invitation.email, locale=locale, subject=SUBJECT,
                     link=invitation_link(issuer, token),
                     values={"org": invitation.org_id, "role": invitation.role.value,
                             "ttl": ttl})  # fmt: skip


class InvitationMailer:
    """``application.accounts.invitations.InvitationMail``: ``mailer(invitation, token)`` posts
    the message to the ``Outbox`` (``auth.issuer`` and ``auth.invitation_ttl`` in force); never
    raises. The outbox logs and publishes the invitation's id (its recipient has no user id yet),
    never the link."""

    def __init__(self, outbox: Outbox, auth: Live[AuthSettings]) -> None:
        self._outbox = outbox
        self._auth = auth

    def __call__(self, invitation: Invitation, token: str) -> None:
        """Post the invitation's message with the link of ``token``."""
        cfg = self._auth.current
        message = compose_invitation(invitation, token, cfg.issuer, cfg.invitation_ttl)
        self._outbox.post(message, invitation.id)
