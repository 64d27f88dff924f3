"""The invitation's message (docs/reference/invitations.md): composed here, sent by the
``Outbox`` of ``application.recovery.mail`` after the commit, off the request's path; a failure
to send is logged and counted (kind ``invitation``), never answered.

The link is ``{auth.issuer}/ui/invitation?token={token}``, the hosted page that accepts it.
"""

from __future__ import annotations

import html
from urllib.parse import quote

from application.ports import EmailMessage
from application.recovery.mail import Outbox
from application.shared.settings import AuthSettings, Live
from domain.invitations import Invitation

__all__ = ["INVITATION", "InvitationMailer", "compose_invitation", "invitation_link"]

INVITATION = "invitation"
"""``EmailMessage.kind`` of an invitation."""
SUBJECT = "You are invited to create an account"

_INTRO = "You are invited to join the organization {org} as {role}."
_ACT = "To create your account, open the link below and choose a password."
_OUTRO = "If you did not expect this invitation, you can ignore this message."


def _lasts(seconds: int) -> str:
    days, rest = divmod(seconds, 86_400)
    if rest == 0:
        return f"{days} day{'s' if days != 1 else ''}"
    hours = max(1, seconds // 3600)
    return f"{hours} hour{'s' if hours != 1 else ''}"


def invitation_link(issuer: str, token: str) -> str:
    """``{issuer}/ui/invitation?token={token}`` (the token URL-quoted)."""
    return f"{issuer.rstrip('/')}/ui/invitation?token={quote(token, safe='')}"


def compose_invitation(invitation: Invitation, token: str, issuer: str, ttl: int) -> EmailMessage:
    """The message to ``invitation.email`` with the link of ``token``: a plain-text body and an
    HTML alternative (every value escaped), saying the link works for ``ttl`` seconds and once."""
    link = invitation_link(issuer, token)
    intro = _INTRO.format(org=invitation.org_id, role=invitation.role.value)
    lasts = f"The link works for {_lasts(ttl)} and only once."
    text = f"{intro}\n{_ACT}\n\n{link}\n\n{lasts}\n{_OUTRO}\n"
    href = html.escape(link, quote=True)
    body = (
        f"<p>{html.escape(intro)}<br>{html.escape(_ACT)}</p>\n"
        f'<p><a href="{href}">{href}</a></p>\n'
        f"<p>{html.escape(lasts)}<br>{html.escape(_OUTRO)}</p>\n"
    )
    return EmailMessage(INVITATION, invitation.email, SUBJECT, text, body, link)


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
