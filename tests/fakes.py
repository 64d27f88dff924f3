"""Test doubles that are not adapters: a controllable clock, and a recorder of the events
published on a bus."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from adapters.events.inprocess import InProcessEventBus
from application.events.catalog import Event
from application.ports import Clock


class FakeClock(Clock):
    """A Clock (application.ports.Clock) that moves only when told. Starts at 2026-01-01 UTC."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)

    def now(self) -> datetime:
        """The controlled current time (timezone-aware UTC)."""
        return self._now

    def advance(self, seconds: float) -> None:
        """Move the clock forward by ``seconds``."""
        self._now += timedelta(seconds=seconds)


class Recorder:
    """Collects every event published on a bus."""

    def __init__(self, bus: InProcessEventBus) -> None:
        self.events: list[Event] = []
        bus.subscribe(Event, self.events.append)

    def of(self, cls: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, cls)]
