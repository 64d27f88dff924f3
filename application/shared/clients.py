"""Client names for the views that show which client a user's record belongs to (sessions,
docs/reference/tokens-and-sessions.md; consents, section 15)."""

from __future__ import annotations

from collections.abc import Iterable

from application.ports import UnitOfWork

__all__ = ["client_names"]


async def client_names(uow: UnitOfWork, client_ids: Iterable[str | None]) -> dict[str, str]:
    """``{client_id: name}`` of the clients named in ``client_ids`` (None skipped, each id read
    once through ``uow.clients``); a client deleted meanwhile is absent. Raises what the store
    raises."""
    names: dict[str, str] = {}
    for client_id in dict.fromkeys(c for c in client_ids if c is not None):
        client = await uow.clients.get(client_id)
        if client is not None:
            names[client_id] = client.name
    return names
