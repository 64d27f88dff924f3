"""The durable outbox (docs/adr/0049-durable-outbox.md): messages to other systems written in the
same transaction as the change they announce, then delivered at least once by whichever instance
claims them first.

An item is claimed for a lease (``claimed_until``) by one delivery worker at a time; the worker
either deletes it (delivered, or given up) or schedules its next try. A worker that dies mid-way
leaves a claim that lapses at ``claimed_until``, after which any instance claims the item again.
Pure rules only: the schedule of retries, no I/O.
"""

from __future__ import annotations

import enum
import secrets
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from types import MappingProxyType

import attrs

__all__ = [
    "BACKCHANNEL_FIRST_DELAY",
    "BACKCHANNEL_MAX_DELAY",
    "OutboxItem",
    "OutboxKind",
    "backchannel_delay",
    "new_outbox_id",
    "next_try_at",
    "schedule_delay",
]

BACKCHANNEL_FIRST_DELAY = 2
"""Seconds before the second try of a back-channel logout notice (docs/reference/oauth-and-oidc.md);
each later wait doubles."""
BACKCHANNEL_MAX_DELAY = 600
"""The longest wait between two tries of a back-channel logout notice, in seconds."""


class OutboxKind(enum.StrEnum):
    """What an outbox item carries: ``backchannel_logout`` a logout token for one client and
    session (OpenID Connect Back-Channel Logout 1.0); ``webhook`` one audit event for one webhook
    endpoint (the Standard Webhooks specification)."""

    BACKCHANNEL_LOGOUT = "backchannel_logout"
    WEBHOOK = "webhook"


def new_outbox_id() -> str:
    """A fresh item id: 128 random bits, base64url (22 characters). Also the logout token's
    ``jti`` and the webhook's ``webhook-id``, so every retry of one item carries the same id
    and a receiver can drop duplicates."""
    return secrets.token_urlsafe(16)


def _frozen_payload(values: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(values))


@attrs.frozen
class OutboxItem:
    """One message waiting to go out.

    ``id`` (``new_outbox_id``), ``kind``; ``payload``: a flat mapping of strings naming what to
    send (ids only: the message itself is built at delivery, never stored with a secret);
    ``created_at`` (the commit of the change it announces, the start of its retry window),
    ``due_at`` (not tried before then), ``attempts`` (tries so far), ``claimed_until`` (None:
    free; else the end of the lease of the worker holding it), ``claim`` (the holder's random
    claim token, None when free), ``last_error`` (the latest failure's short reason, never a
    body or a secret). Times are timezone-aware UTC.
    """

    id: str
    kind: OutboxKind
    payload: Mapping[str, str] = attrs.field(converter=_frozen_payload)
    created_at: datetime
    due_at: datetime
    attempts: int = 0
    claimed_until: datetime | None = None
    claim: str | None = None
    last_error: str | None = None

    def claimable(self, now: datetime) -> bool:
        """True when a worker may claim it at ``now``: due, and free or its lease lapsed."""
        return self.due_at <= now and (self.claimed_until is None or self.claimed_until <= now)


def backchannel_delay(attempts: int) -> int:
    """Seconds to wait after the ``attempts``-th failed try (1 or more) of a back-channel logout
    notice: 2, 4, 8 ... capped at ``BACKCHANNEL_MAX_DELAY``. Raises ``ValueError`` below 1."""
    if attempts < 1:
        raise ValueError("attempts must be 1 or more")
    return min(BACKCHANNEL_FIRST_DELAY << min(attempts - 1, 16), BACKCHANNEL_MAX_DELAY)


def next_try_at(
    created_at: datetime, failed_at: datetime, delay: int, window: int
) -> datetime | None:
    """When to try again after a failure at ``failed_at``: ``delay`` seconds later, or None
    (give up) when that falls after ``created_at`` + ``window`` seconds (the retry window)."""
    at = failed_at + timedelta(seconds=delay)
    return None if at > created_at + timedelta(seconds=window) else at


def schedule_delay(schedule: Sequence[int], attempts: int) -> int:
    """Seconds to wait after the ``attempts``-th failed try (1 or more) under ``schedule`` (the
    waits between tries, in seconds, e.g. ``webhooks.retry_schedule``): its ``attempts``-th
    value, then its last value again. Raises ``ValueError`` for an empty schedule or
    ``attempts`` below 1."""
    if not schedule or attempts < 1:
        raise ValueError("a non-empty schedule and attempts of 1 or more")
    return schedule[min(attempts, len(schedule)) - 1]
