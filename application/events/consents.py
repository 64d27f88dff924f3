"""Events of the consents a user gave OpenID Connect clients (contract section 15). Ids only:
never a token or a code."""

from __future__ import annotations

import attrs

from application.events.catalog import Event

__all__ = ["ConsentRevoked"]


@attrs.frozen
class ConsentRevoked(Event):
    """``user_id`` revoked its consent to the client ``client_id`` (DELETE
    /me/consents/{client_id}); ``sessions_ended`` of the user's sessions that client started
    ended with it (each also has its ``SessionEnded``, reason ``user``)."""

    user_id: str
    client_id: str
    sessions_ended: int
