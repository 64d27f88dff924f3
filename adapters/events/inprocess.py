"""The in-process EventBus adapter (docs/reference/operations.md)."""

from __future__ import annotations

import inspect
import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from application.events.catalog import Event
from application.ports import EventBus

log = logging.getLogger("authsvc.events")

E = TypeVar("E", bound=Event)


class InProcessEventBus(EventBus):
    """Delivers each published event to the subscribers of its class and of its base classes,
    in subscription order, within this process.

    A subscriber that raises is logged (event type only, no payload) and does not fail the
    publisher or stop the other subscribers. Every event is also logged at INFO with its fields,
    which by design are ids and never secrets.
    """

    def __init__(self) -> None:
        self._handlers: dict[type[Event], list[Callable[[Any], Awaitable[None] | None]]] = (
            defaultdict(list)
        )

    def subscribe(
        self, event_type: type[E], handler: Callable[[E], Awaitable[None] | None]
    ) -> None:
        """Call ``handler`` (sync or async) for every published instance of ``event_type``."""
        self._handlers[event_type].append(handler)

    def health(self) -> dict[str, Any]:
        """The ``events`` health component: ``{"backend": "memory"}`` (always UP)."""
        return {"backend": "memory"}

    async def publish(self, event: Event) -> None:
        """Deliver ``event``; never raises because of a subscriber."""
        log.debug("event %s %r", type(event).__name__, event)
        for cls in type(event).__mro__:
            for handler in list(self._handlers.get(cls, ())):
                try:
                    result = handler(event)
                    if inspect.isawaitable(result):
                        await result
                except Exception:
                    log.exception("subscriber of %s failed", type(event).__name__)
