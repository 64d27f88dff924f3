"""Events of passkeys (docs/reference/mfa-and-passkeys.md). Ids only: never a key, a challenge or a
response."""

from __future__ import annotations

import attrs

from application.events.catalog import Event

__all__ = ["PasskeyCloneSuspected", "PasskeyRegistered", "PasskeyRemoved"]


@attrs.frozen
class PasskeyRegistered(Event):
    """``user_id`` registered the passkey ``passkey_id``."""

    user_id: str
    passkey_id: str


@attrs.frozen
class PasskeyRemoved(Event):
    """``actor_id`` (the user, or an admin for a lost device) removed the passkey
    ``passkey_id`` of ``user_id``."""

    user_id: str
    passkey_id: str
    actor_id: str


@attrs.frozen
class PasskeyCloneSuspected(Event):
    """The counter of ``user_id``'s passkey ``passkey_id`` did not grow: it is flagged
    ``suspected_clone`` and refused until deleted."""

    user_id: str
    passkey_id: str
