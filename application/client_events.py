"""Events of the OAuth client registry (contract section 14). Ids and field names only: never
a client secret or its hash."""

from __future__ import annotations

import attrs

from application.events import Event

__all__ = ["ClientCreated", "ClientDeleted", "ClientSecretRotated", "ClientUpdated"]


@attrs.frozen
class ClientCreated(Event):
    """The client ``client_id`` of ``org_id`` was registered by ``actor_id``."""

    client_id: str
    org_id: str
    actor_id: str


@attrs.frozen
class ClientUpdated(Event):
    """``actor_id`` changed ``fields`` (names, comma-separated) of the client ``client_id``."""

    client_id: str
    org_id: str
    actor_id: str
    fields: str


@attrs.frozen
class ClientSecretRotated(Event):
    """``actor_id`` gave the client ``client_id`` a new secret; the previous one works for
    ``grace`` more seconds (0: not at all)."""

    client_id: str
    org_id: str
    actor_id: str
    grace: int


@attrs.frozen
class ClientDeleted(Event):
    """``actor_id`` deleted the client ``client_id``; its live tokens are inactive at once."""

    client_id: str
    org_id: str
    actor_id: str
