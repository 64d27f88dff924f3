"""Webhook endpoints (docs/reference/webhooks.md; the Standard Webhooks specification): where an
organization's audit events are POSTed, signed with the endpoint's secret, and the log of
delivery attempts. Pure rules only: the endpoint's checks (URL, event types), the retry
schedule's defaults, when a failing endpoint is disabled — no I/O.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Iterable
from datetime import datetime, timedelta
from urllib.parse import urlsplit

import attrs

from domain.audit import AUDIT_EVENT_TYPES
from domain.errors import FieldError, ValidationFailed
from domain.network import is_local_host

__all__ = [
    "DEFAULT_DELIVERY_RETENTION",
    "DEFAULT_RETRY_SCHEDULE",
    "MAX_DELIVERY_RETENTION",
    "MAX_DESCRIPTION_LENGTH",
    "MAX_URL_LENGTH",
    "RETRY_WINDOW",
    "SECRET_BYTES",
    "SECRET_PREFIX",
    "TEST_EVENT_TYPE",
    "Webhook",
    "WebhookDelivery",
    "check_event_types",
    "check_webhook_url",
    "new_webhook_secret",
    "should_disable",
]

SECRET_PREFIX = "whsec_"  # noqa: S105 - the Standard Webhooks prefix, not a secret
"""The prefix of a signing secret (Standard Webhooks): ``whsec_`` + base64 of the key bytes."""
SECRET_BYTES = 32
"""Random bytes of a signing secret (256 bits; the specification asks for 24 to 64)."""
MAX_URL_LENGTH = 2048
MAX_DESCRIPTION_LENGTH = 500
TEST_EVENT_TYPE = "webhook.test"
"""The ``type`` of the message ``POST /webhooks/{id}/test`` sends (not an audit type)."""
DEFAULT_RETRY_SCHEDULE = (5, 30, 120, 600, 1800, 3600)
"""Seconds between tries (``webhooks.retry_schedule``): then its last value (hourly) again."""
RETRY_WINDOW = 86_400
"""Seconds a message is retried after the change it announces, then given up (24 h)."""
DEFAULT_DELIVERY_RETENTION = 2_592_000
"""Seconds a try stays in the delivery log (``webhooks.delivery_retention``; 30 days)."""
MAX_DELIVERY_RETENTION = 315_360_000
"""The longest ``webhooks.delivery_retention`` accepted (s; 3650 days)."""


def new_webhook_secret() -> str:
    """A fresh signing secret: ``whsec_`` + base64 of ``SECRET_BYTES`` bytes from ``secrets``.
    Shown once (at create and at rotate), stored sealed."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode("ascii")


def _str_tuple(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(values)


@attrs.frozen
class Webhook:
    """One endpoint of an organization.

    ``id``, ``org_id``, ``url`` (https; http only where private targets are allowed),
    ``event_types`` (audit types, sorted, no duplicates), ``description``, ``enabled``;
    ``sealed_secret``: the signing secret sealed (``SecretSealer``, context the id) — never
    rendered; ``created_at``, ``updated_at``; ``failing_since``: the first failed try since the
    last delivered one (None: not failing); ``disabled_reason``: ``failing`` once disabled for
    failing, else None. Times timezone-aware UTC."""

    id: str
    org_id: str
    url: str
    event_types: tuple[str, ...] = attrs.field(converter=_str_tuple)
    description: str
    enabled: bool
    sealed_secret: bytes = attrs.field(repr=False)
    created_at: datetime
    updated_at: datetime
    failing_since: datetime | None = None
    disabled_reason: str | None = None

    def subscribes(self, event_type: str) -> bool:
        """True when an event of ``event_type`` goes to this endpoint (enabled, subscribed)."""
        return self.enabled and event_type in self.event_types


@attrs.frozen
class WebhookDelivery:
    """One try of one message to one endpoint (``GET /webhooks/{id}/deliveries``).

    ``id``; ``webhook_id``; ``message_id`` (the outbox item's id, the ``webhook-id`` header,
    the same across the tries of a message); ``event_type``; ``attempt`` (1 for the first
    try); ``attempted_at``; ``status_code`` (None: no answer); ``error`` (a short reason, never
    a body or secret; None when delivered)."""

    id: str
    webhook_id: str
    message_id: str
    event_type: str
    attempt: int
    attempted_at: datetime
    status_code: int | None
    error: str | None

    @property
    def delivered(self) -> bool:
        """True for a 2xx answer."""
        return self.status_code is not None and 200 <= self.status_code < 300


def check_webhook_url(url: object, *, allow_private: bool) -> str:
    """The endpoint URL ``url``, checked: a string of at most ``MAX_URL_LENGTH`` characters,
    an absolute ``https`` URL (``http`` too when ``allow_private``) with a host, no user
    information or fragment; unless ``allow_private``, not ``localhost`` nor an IP literal on
    loopback, private, link-local or other non-public networks (``is_public_address``; names
    are checked again after DNS resolution at each delivery). Raises ``ValidationFailed``
    naming ``url``."""
    if not isinstance(url, str) or not url or len(url) > MAX_URL_LENGTH:
        raise _bad("url", f"must be a URL of at most {MAX_URL_LENGTH} characters")
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError:
        raise _bad("url", "must be an absolute URL") from None
    schemes = ("https", "http") if allow_private else ("https",)
    if parts.scheme not in schemes:
        raise _bad("url", "must be an https URL")
    if not host or parts.username is not None or parts.fragment:
        raise _bad("url", "must name a host, without user information or fragment")
    if not allow_private and is_local_host(host):
        raise _bad("url", "must not target a loopback, private or link-local address")
    return url


def check_event_types(values: object) -> tuple[str, ...]:
    """The subscribed types: a non-empty list of audit types (``AUDIT_EVENT_TYPES``), sorted,
    duplicates dropped. Raises ``ValidationFailed`` naming ``event_types``."""
    if isinstance(values, str) or not isinstance(values, list | tuple) or not values:
        raise _bad("event_types", "must be a non-empty list of audit event types")
    unknown = [v for v in values if not isinstance(v, str) or v not in AUDIT_EVENT_TYPES]
    if unknown:
        raise _bad("event_types", "must name audit event types only")
    return tuple(sorted(set(values)))


def should_disable(failing_since: datetime | None, now: datetime, disable_after: int) -> bool:
    """True when an endpoint failing since ``failing_since`` has failed for ``disable_after``
    seconds or more at ``now`` (``webhooks.disable_after``)."""
    return failing_since is not None and now - failing_since >= timedelta(seconds=disable_after)


def _bad(field: str, message: str) -> ValidationFailed:
    return ValidationFailed([FieldError(field, message)])
