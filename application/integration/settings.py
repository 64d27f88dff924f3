"""Prefix ``webhooks`` (docs/reference/webhooks.md): the retry schedule of webhook messages,
when a failing endpoint is disabled, whether endpoints may be on private networks, and how long
the delivery log keeps a try."""

from __future__ import annotations

from typing import Any

import attrs
from attrs import validators as v

from domain.webhooks import (
    DEFAULT_DELIVERY_RETENTION,
    DEFAULT_RETRY_SCHEDULE,
    MAX_DELIVERY_RETENTION,
    RETRY_WINDOW,
)

__all__ = ["WebhooksSettings"]


def _schedule(_: Any, attribute: attrs.Attribute[Any], value: tuple[int, ...]) -> None:
    if not value or len(value) > 50:
        raise ValueError(f"{attribute.name} must list 1 to 50 waits")
    if any(
        isinstance(s, bool) or not isinstance(s, int) or not 1 <= s <= RETRY_WINDOW for s in value
    ):
        raise ValueError(f"{attribute.name} must be waits of 1 to {RETRY_WINDOW} seconds")


@attrs.frozen
class WebhooksSettings:
    """``retry_schedule`` (seconds between tries, each 1..86400, default 5, 30, 120, 600, 1800,
    3600; its last value repeats): a message is retried so for 24 h after its event, then given
    up. ``disable_after`` (s, 3600..2592000, default 432000 = 5 days): an endpoint whose tries
    have all failed for that long is disabled (audited ``webhook.disabled``).
    ``allow_private_targets`` (default false): true lets endpoints be ``http`` URLs and on
    loopback, private or link-local addresses (development and tests only; the server-side
    request forgery guard of docs/adr/0049-durable-outbox.md is off for webhooks then).
    ``delivery_retention`` (s, 86400..315360000, default 2592000 = 30 days): tries in the
    delivery log (``GET /webhooks/{id}/deliveries``) older than that are purged by the
    housekeeping pass (docs/adr/0053-webhook-retention-and-deletion-events.md). A value out of
    range, or not an integer, raises ``ValueError`` (the loader refuses to start, naming the
    key)."""

    retry_schedule: tuple[int, ...] = attrs.field(
        default=DEFAULT_RETRY_SCHEDULE, converter=tuple, validator=_schedule
    )
    disable_after: int = attrs.field(default=432_000, validator=[v.ge(3600), v.le(2_592_000)])
    allow_private_targets: bool = attrs.field(default=False, validator=v.instance_of(bool))
    delivery_retention: int = attrs.field(
        default=DEFAULT_DELIVERY_RETENTION,
        validator=[v.instance_of(int), v.ge(RETRY_WINDOW), v.le(MAX_DELIVERY_RETENTION)],
    )
