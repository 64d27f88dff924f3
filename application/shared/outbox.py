"""The outbox's delivery worker (docs/adr/0049-durable-outbox.md): one round claims a batch of due
items for a lease, hands each to the handler of its kind, then deletes it (delivered, or given
up) or schedules its next try — each step in a short unit of work of its own, so no transaction
stays open while a message is in flight.

Every serving process runs rounds (``entrypoints.http.app``), from its start: what a stopped or
killed instance left behind is delivered by the next round of any instance once its lease
lapses. A handler that crashes counts as a failed try. Delivery is at least once: a worker
that dies after the receiver answered but before it deleted the item sends it again, with the
same id (the logout token's ``jti``, the ``webhook-id``), so receivers can drop duplicates.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Protocol

import attrs

from application.events.audit import record
from application.events.catalog import Event
from application.ports import Clock, EventBus, Storage
from application.shared.steps import publish_all
from domain.outbox import OutboxItem, OutboxKind

__all__ = ["DeliverOutbox", "OutboxHandler", "Outcome"]

_log = logging.getLogger("authsvc.outbox")

LEASE_SECONDS = 60
"""How long a claim holds an item, in seconds: longer than one delivery may take (the HTTP
sender's total timeout is 10 s), short enough that a killed instance's items go out again
within a minute."""
BATCH = 20
"""The most items one round claims."""


@attrs.frozen
class Outcome:
    """How one try of an item went: ``delivered`` (the receiver took it); else ``reason`` (a
    short phrase, never a body or secret) and ``final`` (True: no retry can succeed — the
    target is gone). ``events``: what to record (audit) and publish with the item's end or its
    rescheduling, in the same unit of work."""

    delivered: bool
    reason: str = ""
    final: bool = False
    events: tuple[Event, ...] = ()


class OutboxHandler(Protocol):
    """Delivers the items of one ``OutboxKind`` and knows their retry schedule."""

    async def deliver(self, item: OutboxItem) -> Outcome:
        """Try ``item`` once (``item.attempts`` tries before this one). Never raises for a
        receiver's failure (that is an ``Outcome``)."""
        ...

    def retry_at(self, item: OutboxItem, failed_at: datetime, attempts: int) -> datetime | None:
        """When to try again after the ``attempts``-th failed try at ``failed_at``; None: give
        up now."""
        ...

    def given_up(self, item: OutboxItem, reason: str) -> Sequence[Event]:
        """The events recording that ``item`` was given up for ``reason``."""
        ...


@attrs.frozen
class DeliverOutbox:
    """``await deliver()`` runs one round and returns how many items it handled (tried), so
    a caller can run the next round at once when a whole batch came back.

    Each claimed item is tried concurrently with the others of its batch; an item of a kind
    without a handler stays claimed until its lease lapses (another process may have one).
    Raises what the storage raises for the claim (a storage fault: the round is lost, the next
    one tries again); the end of each item is best effort (its lease lets another round retry)."""

    _storage: Storage
    _bus: EventBus
    _clock: Clock
    _handlers: Mapping[OutboxKind, OutboxHandler]
    _lease: int = LEASE_SECONDS
    _batch: int = BATCH

    async def __call__(self) -> int:
        """One round: claim, deliver, finish or reschedule."""
        claim = secrets.token_urlsafe(16)
        now = self._clock.now()
        async with self._storage.begin() as uow:
            items = await uow.outbox.claim(
                now, now + timedelta(seconds=self._lease), claim, self._batch
            )
            await uow.commit()
        tried = [i for i in items if i.kind in self._handlers]
        await asyncio.gather(*(self._one(item, claim) for item in tried))
        return len(tried)

    async def _one(self, item: OutboxItem, claim: str) -> None:
        handler = self._handlers[item.kind]
        try:
            outcome = await handler.deliver(item)
        except Exception as exc:  # a bug in a handler must not stop the others
            _log.exception("outbox item %s (%s) failed to deliver", item.id, item.kind.value)
            outcome = Outcome(False, f"error: {type(exc).__name__}")
        attempts = item.attempts + 1
        failed_at = self._clock.now()
        events = list(outcome.events)
        retry = None
        if not outcome.delivered:
            retry = None if outcome.final else handler.retry_at(item, failed_at, attempts)
            if retry is None:
                events += handler.given_up(item, outcome.reason)
                _log.warning(
                    "outbox item %s (%s) given up after %d tries: %s",
                    item.id, item.kind.value, attempts, outcome.reason,
                )  # fmt: skip
        try:
            async with self._storage.begin() as uow:
                if retry is None:
                    held = await uow.outbox.finish(item.id, claim)
                else:
                    held = await uow.outbox.retry(item.id, claim, retry, attempts, outcome.reason)
                if not held:  # the lease lapsed: another worker has it now
                    return
                await record(uow, events, failed_at)
                await uow.commit()
        except Exception as exc:  # the lease frees it for a later round
            _log.warning("outbox item %s not updated: %s", item.id, type(exc).__name__)
            return
        await publish_all(self._bus, events)
