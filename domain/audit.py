"""The audit log's record (docs/reference/operations.md): one stored security event.

An audit event names who did what to whom, from where — ids, reasons and roles only, never a
password, token, hash, secret or code. Rows are kept ``audit.retention_days`` and then purged.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime
from types import MappingProxyType

import attrs

AUDIT_EVENT_TYPES = (
    "user.registered",
    "login.succeeded",
    "login.failed",
    "login.rate_limited",
    "token.refreshed",
    "token.reuse_detected",
    "session.ended",
    "password.changed",
    "password.reset_requested",
    "password.reset",
    "email.verified",
    "email.change_requested",
    "email.changed",
    "mfa.enabled",
    "mfa.disabled",
    "mfa.failed",
    "mfa.recovery_codes_regenerated",
    "user.role_changed",
    "user.moved",
    "user.disabled",
    "user.enabled",
    "user.deleted",
    "group.created",
    "group.updated",
    "group.deleted",
    "group.member_added",
    "group.member_removed",
    "config.changed",
    "client.created",
    "client.updated",
    "client.secret_rotated",
    "client.deleted",
    "client.token_issued",
    "client.auth_failed",
    "token.revoked",
    "passkey.registered",
    "passkey.removed",
    "passkey.clone_suspected",
    "oauth.authorized",
    "oauth.consent_granted",
    "oauth.consent_denied",
    "oauth.code_reused",
    "oidc.logout",
    "oauth.consent_revoked",
    "oauth.denied",
    "identity.linked",
    "identity.unlinked",
    "invitation.created",
    "invitation.resent",
    "invitation.revoked",
    "invitation.accepted",
    "oauth.device_approved",
    "oauth.device_denied",
    "oauth.device_code_refused",
    "oidc.backchannel_logout_sent",
    "oidc.backchannel_logout_failed",
    "webhook.created",
    "webhook.updated",
    "webhook.deleted",
    "webhook.secret_rotated",
    "webhook.disabled",
)
"""Every ``type`` an audit event can have (docs/reference/operations.md), in the contract's
order."""

DetailValue = str | int | bool | None
"""A value of ``AuditEvent.details``: an id, a reason, a role, a count or a flag."""


def new_audit_id(occurred_at: datetime) -> str:
    """A new audit event id that sorts by time: 32 lower-case hex characters, the first 14 the
    microseconds since the Unix epoch of ``occurred_at`` (timezone-aware), the rest random. Ids
    of events of different microseconds order like their times; the keyset pagination of
    ``GET /audit-events`` (newest first) walks them in that order."""
    micros = round(occurred_at.timestamp() * 1_000_000)
    return f"{micros:014x}{os.urandom(9).hex()}"


def _frozen(details: Mapping[str, DetailValue]) -> Mapping[str, DetailValue]:
    return MappingProxyType(dict(details))


@attrs.frozen
class AuditEvent:
    """One stored security event (docs/reference/operations.md), rendered as ``{"id", "type",
    "occurred_at", "actor_id", "user_id", "org_id", "client_address", "user_agent", "details"}``.

    ``id``: from ``new_audit_id`` (time-ordered). ``type``: one of ``AUDIT_EVENT_TYPES``.
    ``actor_id``: who acted (a user id, ``"cli"`` for the operator, None when unknown, e.g. a
    failed login). ``user_id``: whom it concerns (None for a group event or an unknown email).
    ``org_id``: the organization the event belongs to — that of the user or group; None lets
    the store take the user's current organization. ``client_address`` and ``user_agent``: of
    the HTTP request, None outside one. ``details``: a small flat mapping of ids and reasons.
    """

    id: str
    type: str = attrs.field(validator=attrs.validators.in_(AUDIT_EVENT_TYPES))
    occurred_at: datetime
    actor_id: str | None
    user_id: str | None
    org_id: str | None
    client_address: str | None = None
    user_agent: str | None = None
    details: Mapping[str, DetailValue] = attrs.field(factory=dict, converter=_frozen, hash=False)

    def details_dict(self) -> dict[str, DetailValue]:
        """``details`` as a plain dict (for JSON and comparisons)."""
        return dict(self.details)


@attrs.frozen
class AuditQuery:
    """The filters of ``GET /audit-events`` (docs/reference/operations.md): ``org_id`` (None: every
    organization — a superadmin's view), ``user_id``, ``type`` (one of ``AUDIT_EVENT_TYPES``) and
    ``since`` (events at or after it); None means no filter."""

    org_id: str | None = None
    user_id: str | None = None
    type: str | None = None
    since: datetime | None = None
