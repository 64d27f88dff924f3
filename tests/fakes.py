"""Test doubles that are not adapters: a controllable clock, a recorder of the events
published on a bus, a resolver that sends every name to one address."""

from __future__ import annotations

import socket
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp.abc import AbstractResolver, ResolveResult

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


class FixedResolver(AbstractResolver):
    """An aiohttp resolver that resolves every name to ``address`` (no DNS; IPv4 or IPv6),
    remembering the names asked in ``asked``: a public-looking name that lands on a private
    address, for the server-side request forgery guards."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.asked: list[str] = []

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        """``address`` for ``host``."""
        self.asked.append(host)
        fam = socket.AF_INET6 if ":" in self.address else socket.AF_INET
        return [ResolveResult(hostname=host, host=self.address, port=port, family=fam,
                              proto=0, flags=socket.AI_NUMERICHOST)]  # fmt: skip

    async def close(self) -> None:
        """Nothing to release."""
        return None
