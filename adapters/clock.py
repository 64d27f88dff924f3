"""The system Clock adapter."""

from __future__ import annotations

from datetime import UTC, datetime

from application.ports import Clock


class SystemClock(Clock):
    """``now()`` is the wall-clock time as a timezone-aware UTC datetime."""

    def now(self) -> datetime:
        """The current UTC time."""
        return datetime.now(UTC)
