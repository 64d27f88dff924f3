"""Events of login with other identity providers (docs/reference/federation.md). Ids and the
provider only: never a token, a code or a secret."""

from __future__ import annotations

import attrs

from application.events.catalog import Event

__all__ = ["IdentityLinked", "IdentityUnlinked"]


@attrs.frozen
class IdentityLinked(Event):
    """``user_id`` can now sign in with ``provider`` (``how``: ``created`` with a new user,
    ``trusted_email`` by the provider's verified email, ``account`` from the account page,
    ``invitation`` by accepting an invitation)."""

    user_id: str
    provider: str
    how: str


@attrs.frozen
class IdentityUnlinked(Event):
    """``user_id``'s identity at ``provider`` was removed: by the user (``reason`` None), or
    when the owner first proved the email (``reason`` ``email_proven``: it was linked while
    the email was unverified)."""

    user_id: str
    provider: str
    reason: str | None = None
