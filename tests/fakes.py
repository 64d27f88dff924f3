"""Test doubles that are not adapters: a controllable clock and an id source."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

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
