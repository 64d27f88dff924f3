"""Small steps shared by the use cases: new ids, opaque tokens and their hashes, and publishing
events after the commit."""

from __future__ import annotations

import hashlib
import secrets
import uuid
from collections.abc import Callable, Iterable

from application.events.catalog import Event
from application.ports import EventBus

__all__ = ["IdFactory", "hash_token", "new_id", "new_opaque_token", "publish_all"]

IdFactory = Callable[[], str]
"""Makes a new unique id (users, groups)."""


def new_id() -> str:
    """A new random id: 32 lower-case hex characters (UUID4)."""
    return uuid.uuid4().hex


OPAQUE_TOKEN_BYTES = 32
"""Entropy of an opaque token (refresh, reset, verification, MFA): 32 bytes (256 bits) from
``secrets``, base64url (43 characters)."""


def hash_token(token: str) -> str:
    """SHA-256 of an opaque token's UTF-8 bytes, lower-case hex (64 chars): its only stored
    form."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_opaque_token() -> tuple[str, str]:
    """A new opaque token and its hash: ``(clear, hash_token(clear))``; the clear one is handed
    out once and never stored."""
    clear = secrets.token_urlsafe(OPAQUE_TOKEN_BYTES)
    return clear, hash_token(clear)


async def publish_all(bus: EventBus, events: Iterable[Event]) -> None:
    """Publish ``events`` in order. Call it after the unit of work has committed, never before."""
    for event in events:
        await bus.publish(event)
