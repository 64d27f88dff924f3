"""Small steps shared by the use cases on users, groups and the operator's command line: new ids
and publishing events after the commit."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable

from application.events import Event
from application.ports import EventBus

__all__ = ["IdFactory", "new_id", "publish_all"]

IdFactory = Callable[[], str]
"""Makes a new unique id (users, groups)."""


def new_id() -> str:
    """A new random id: 32 lower-case hex characters (UUID4)."""
    return uuid.uuid4().hex


async def publish_all(bus: EventBus, events: Iterable[Event]) -> None:
    """Publish ``events`` in order. Call it after the unit of work has committed, never before."""
    for event in events:
        await bus.publish(event)
