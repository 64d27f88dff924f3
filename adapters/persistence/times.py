"""Helpers shared by the storage adapters (no driver imports): time conversion and checks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def require_aware(at: datetime) -> datetime:
    """Return ``at`` unchanged; raise ``ValueError`` if it is naive (no tzinfo)."""
    if at.tzinfo is None or at.utcoffset() is None:
        raise ValueError(f"naive datetime {at!r}: storage needs timezone-aware UTC times")
    return at


def to_micros(at: datetime) -> int:
    """Integer microseconds since the Unix epoch of an aware datetime (exact, no float)."""
    delta = require_aware(at) - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_micros(micros: int) -> datetime:
    """The timezone-aware UTC datetime ``micros`` microseconds after the Unix epoch."""
    return _EPOCH + timedelta(microseconds=micros)
