"""The audit log's writing side (docs/reference/operations.md; ADR 0019): which events become audit
rows, with what, and when they are written.

A use case that changes something records its events with ``record(uow, events, now)`` before
``uow.commit()``: the rows commit with the change or not at all. A failure that changes nothing
(a wrong password, a throttled login, a reused refresh token, a wrong MFA code) is recorded
with ``record_apart`` right after, in its own short unit of work; if that fails, the failure is
logged and counted (``AuditWriteFailed``), never raised.

The HTTP driver puts the request's client address and user agent in ``REQUEST_CONTEXT`` for the
duration of a request; outside one (the command line) both are None.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from datetime import datetime
from typing import Any

import attrs

import application.events.catalog as ev
import application.events.clients as cev
import application.events.federation as fev
import application.events.invitations as iev
import application.events.oidc as oev
import application.events.passkeys as pev
import application.events.scim as sev
import application.events.webhooks as wev
from application.events.fanout import queue_webhooks
from application.ports import EventBus, Storage, UnitOfWork
from domain.audit import AuditEvent, DetailValue, new_audit_id

__all__ = [
    "REQUEST_CONTEXT",
    "RequestContext",
    "audit_events",
    "publish_failure",
    "record",
    "record_apart",
]

_log = logging.getLogger(__name__)


@attrs.frozen
class RequestContext:
    """Where the current request comes from: the client address (after ``trusted_proxies``)
    and the ``User-Agent`` header (at most 512 characters kept), or None."""

    client_address: str | None = None
    user_agent: str | None = None


REQUEST_CONTEXT: ContextVar[RequestContext | None] = ContextVar(
    "authsvc_request_context", default=None
)
"""The request being served by this task (set by the HTTP driver); None outside a request."""
_NO_REQUEST = RequestContext()

_USER_AGENT_MAX = 512


@attrs.frozen
class _Row:
    """What one event contributes: its type, actor, subject, organization and details."""

    type: str
    actor_id: str | None
    user_id: str | None
    org_id: str | None = None
    details: dict[str, DetailValue] = attrs.Factory(dict)


def _login_failed(e: ev.LoginFailed) -> _Row:
    if e.reason == "rate_limited":
        return _Row("login.rate_limited", None, e.user_id)
    return _Row("login.failed", None, e.user_id, details={"reason": e.reason, "method": e.method})


def _issued(e: ev.AccessTokenIssued) -> _Row | None:
    if e.grant != "refresh":  # a login's pair is in its login.succeeded row
        return None
    return _Row("token.refreshed", e.user_id, e.user_id, details={"session_id": e.family_id})


def _membership(e: ev.GroupMembershipChanged) -> _Row:
    kind = "group.member_added" if e.added else "group.member_removed"
    return _Row(kind, e.actor_id, e.user_id, e.org_id, {"group_id": e.group_id})


def _config(e: ev.ConfigChanged) -> _Row | None:
    if e.origin is not None:  # a peer's refresh: recorded by the peer
        return None
    return _Row("config.changed", e.actor_id, None, details={"changed": ",".join(e.changed)})


_ROWS: dict[type[ev.Event], Callable[[Any], _Row | None]] = {
    ev.UserRegistered: lambda e: _Row("user.registered", e.user_id, e.user_id, e.org_id),
    ev.LoginSucceeded: lambda e: _Row(
        "login.succeeded",
        e.user_id,
        e.user_id,
        details={"session_id": e.family_id, "method": e.method}
        | ({} if e.client_id is None else {"client_id": e.client_id})
        | ({} if e.provider is None else {"provider": e.provider}),
    ),
    ev.LoginFailed: _login_failed,
    ev.AccessTokenIssued: _issued,
    ev.RefreshTokenReuseDetected: lambda e: _Row(
        "token.reuse_detected",
        None,
        e.user_id,
        details={"session_id": e.family_id, "revoked": e.revoked},
    ),
    ev.SessionEnded: lambda e: _Row(
        "session.ended",
        e.actor_id,
        e.user_id,
        details={"session_id": e.session_id, "reason": str(e.reason)},
    ),
    ev.PasswordChanged: lambda e: _Row(
        "password.changed", e.user_id, e.user_id, details={"sessions_ended": e.revoked}
    ),
    ev.PasswordResetRequested: lambda e: _Row("password.reset_requested", e.actor_id, e.user_id),
    ev.PasswordReset: lambda e: _Row(
        "password.reset", e.user_id, e.user_id, details={"sessions_ended": e.revoked}
    ),
    ev.EmailVerified: lambda e: _Row("email.verified", e.user_id, e.user_id),
    ev.EmailChangeRequested: lambda e: _Row("email.change_requested", e.user_id, e.user_id),
    ev.EmailChanged: lambda e: _Row("email.changed", e.user_id, e.user_id),
    ev.MfaEnabled: lambda e: _Row("mfa.enabled", e.user_id, e.user_id),
    ev.MfaDisabled: lambda e: _Row("mfa.disabled", e.actor_id, e.user_id),
    ev.RecoveryCodesRegenerated: lambda e: _Row(
        "mfa.recovery_codes_regenerated", e.user_id, e.user_id
    ),
    ev.MfaFailed: lambda e: _Row("mfa.failed", None, e.user_id, details={"reason": e.reason}),
    ev.RoleChanged: lambda e: _Row(
        "user.role_changed",
        e.actor_id,
        e.user_id,
        details={"old_role": e.old_role, "new_role": e.new_role},
    ),
    ev.UserMoved: lambda e: _Row(
        "user.moved", e.actor_id, e.user_id, e.org_id, {"old_org_id": e.old_org_id}
    ),
    ev.UserDisabled: lambda e: _Row("user.disabled", e.actor_id, e.user_id),
    ev.UserEnabled: lambda e: _Row("user.enabled", e.actor_id, e.user_id),
    ev.UserDeleted: lambda e: _Row("user.deleted", e.actor_id, e.user_id, e.org_id),
    ev.GroupCreated: lambda e: _Row(
        "group.created", e.actor_id, None, e.org_id, {"group_id": e.group_id}
    ),
    ev.GroupRenamed: lambda e: _Row(
        "group.updated", e.actor_id, None, e.org_id, {"group_id": e.group_id}
    ),
    ev.GroupDeleted: lambda e: _Row(
        "group.deleted", e.actor_id, None, e.org_id, {"group_id": e.group_id}
    ),
    ev.GroupMembershipChanged: _membership,
    ev.ConfigChanged: _config,
    cev.ClientCreated: lambda e: _Row(
        "client.created", e.actor_id, None, e.org_id, {"client_id": e.client_id}
    ),
    cev.ClientUpdated: lambda e: _Row(
        "client.updated",
        e.actor_id,
        None,
        e.org_id,
        {"client_id": e.client_id, "fields": e.fields},
    ),
    cev.ClientSecretRotated: lambda e: _Row(
        "client.secret_rotated",
        e.actor_id,
        None,
        e.org_id,
        {"client_id": e.client_id, "grace": e.grace},
    ),
    cev.ClientDeleted: lambda e: _Row(
        "client.deleted", e.actor_id, None, e.org_id, {"client_id": e.client_id}
    ),
    cev.ClientTokenIssued: lambda e: _Row(
        "client.token_issued",
        e.client_id,
        None,
        e.org_id,
        {"client_id": e.client_id, "jti": e.jti, "scope": e.scope},
    ),
    cev.ClientAuthFailed: lambda e: _Row(
        "client.auth_failed",
        None,
        None,
        e.org_id,
        {"client_id": e.client_id, "reason": e.reason},
    ),
    pev.PasskeyRegistered: lambda e: _Row(
        "passkey.registered", e.user_id, e.user_id, details={"passkey_id": e.passkey_id}
    ),
    pev.PasskeyCloneSuspected: lambda e: _Row(
        "passkey.clone_suspected", None, e.user_id, details={"passkey_id": e.passkey_id}
    ),
    pev.PasskeyRemoved: lambda e: _Row(
        "passkey.removed", e.actor_id, e.user_id, details={"passkey_id": e.passkey_id}
    ),
    cev.AccessTokenRevoked: lambda e: _Row(
        "token.revoked", e.client_id, None, e.org_id, {"client_id": e.client_id, "jti": e.jti}
    ),
    oev.Authorized: lambda e: _Row(
        "oauth.authorized",
        e.user_id,
        e.user_id,
        details={"client_id": e.client_id, "scope": e.scope, "session_id": e.session_id},
    ),
    oev.ConsentDecided: lambda e: _Row(
        "oauth.consent_granted" if e.granted else "oauth.consent_denied",
        e.user_id,
        e.user_id,
        details={"client_id": e.client_id, "scope": e.scope},
    ),
    oev.AuthorizationDenied: lambda e: _Row(
        "oauth.denied",
        e.user_id,
        e.user_id,
        details={"client_id": e.client_id, "reason": e.reason},
    ),
    oev.DeviceDecided: lambda e: _Row(
        "oauth.device_approved" if e.approved else "oauth.device_denied",
        e.user_id,
        e.user_id,
        details={"client_id": e.client_id, "scope": e.scope, "session_id": e.session_id},
    ),
    oev.DeviceUserCodeRefused: lambda e: _Row(
        "oauth.device_code_refused", e.user_id, e.user_id, details={}
    ),
    oev.CodeReused: lambda e: _Row(
        "oauth.code_reused",
        None,
        e.user_id,
        details={"client_id": e.client_id, "session_id": e.family_id},
    ),
    fev.IdentityLinked: lambda e: _Row(
        "identity.linked", e.user_id, e.user_id, details={"provider": e.provider, "how": e.how}
    ),
    fev.IdentityUnlinked: lambda e: _Row(
        "identity.unlinked",
        e.user_id,
        e.user_id,
        details={"provider": e.provider, **({"reason": e.reason} if e.reason else {})},
    ),
    oev.OidcLogout: lambda e: _Row(
        "oidc.logout",
        e.user_id,
        e.user_id,
        details={"session_id": e.session_id, "client_id": e.client_id},
    ),
    iev.InvitationCreated: lambda e: _Row(
        "invitation.created",
        e.actor_id,
        None,
        e.org_id,
        {"invitation_id": e.invitation_id, "role": e.role},
    ),
    iev.InvitationResent: lambda e: _Row(
        "invitation.resent", e.actor_id, None, e.org_id, {"invitation_id": e.invitation_id}
    ),
    iev.InvitationRevoked: lambda e: _Row(
        "invitation.revoked", e.actor_id, None, e.org_id, {"invitation_id": e.invitation_id}
    ),
    iev.InvitationAccepted: lambda e: _Row(
        "invitation.accepted",
        e.user_id,
        e.user_id,
        e.org_id,
        {"invitation_id": e.invitation_id, "method": e.method},
    ),
    oev.BackchannelLogoutSent: lambda e: _Row(
        "oidc.backchannel_logout_sent",
        None,
        e.user_id,
        details={"client_id": e.client_id, "session_id": e.sid, "attempts": e.attempts},
    ),
    oev.BackchannelLogoutFailed: lambda e: _Row(
        "oidc.backchannel_logout_failed",
        None,
        e.user_id,
        details={"client_id": e.client_id, "session_id": e.sid, "reason": e.reason},
    ),
    oev.ConsentRevoked: lambda e: _Row(
        "oauth.consent_revoked",
        e.user_id,
        e.user_id,
        details={"client_id": e.client_id, "sessions_ended": e.sessions_ended},
    ),
    sev.UserProvisioned: lambda e: _Row(
        "user.registered", e.actor_id, e.user_id, e.org_id, {"via": "scim"}
    ),
    sev.ProvisionedEmailChanged: lambda e: _Row(
        "email.changed", e.actor_id, e.user_id, details={"via": "scim"}
    ),
    wev.WebhookCreated: lambda e: _Row(
        "webhook.created", e.actor_id, None, e.org_id, {"webhook_id": e.webhook_id}
    ),
    wev.WebhookUpdated: lambda e: _Row(
        "webhook.updated",
        e.actor_id,
        None,
        e.org_id,
        {"webhook_id": e.webhook_id, "fields": e.fields},
    ),
    wev.WebhookDeleted: lambda e: _Row(
        "webhook.deleted", e.actor_id, None, e.org_id, {"webhook_id": e.webhook_id}
    ),
    wev.WebhookSecretRotated: lambda e: _Row(
        "webhook.secret_rotated", e.actor_id, None, e.org_id, {"webhook_id": e.webhook_id}
    ),
    wev.WebhookDisabled: lambda e: _Row(
        "webhook.disabled",
        None,
        None,
        e.org_id,
        {"webhook_id": e.webhook_id, "reason": e.reason},
    ),
}
"""Event class → its audit row. Events not here (``MfaChallenged``, ``EmailSent``,
``RefreshFailed``, ``SigningKeysChanged``...) are not audited: each is part of, or a detail of,
an audited one, or not a security event."""


def audit_events(
    events: Iterable[ev.Event], now: datetime, context: RequestContext | None = None
) -> list[AuditEvent]:
    """The audit rows of ``events`` at ``now`` (timezone-aware), in order, from the request
    ``context`` (default: ``REQUEST_CONTEXT``). Events that are not audited give no row."""
    ctx = context or REQUEST_CONTEXT.get() or _NO_REQUEST
    agent = None if ctx.user_agent is None else ctx.user_agent[:_USER_AGENT_MAX]
    rows: list[AuditEvent] = []
    for event in events:
        make = _ROWS.get(type(event))
        row = None if make is None else make(event)
        if row is None:
            continue
        rows.append(
            AuditEvent(
                new_audit_id(now),
                row.type,
                now,
                row.actor_id,
                row.user_id,
                row.org_id,
                ctx.client_address,
                agent,
                row.details,
            )
        )
    return rows


async def record(uow: UnitOfWork, events: Iterable[ev.Event], now: datetime) -> None:
    """Record the audit rows of ``events`` in ``uow``: call it before ``uow.commit()``, so the
    rows commit with the change they record, or neither does; so do the webhook messages of
    the rows (``application.events.fanout``). Raises what the store raises."""
    rows = audit_events(events, now)
    for row in rows:
        await uow.audit.record(row)
    if rows:
        await queue_webhooks(uow, rows, now)


async def record_apart(
    storage: Storage, bus: EventBus, events: Iterable[ev.Event], now: datetime
) -> None:
    """Record the audit rows of ``events`` (failures that change nothing else) in a unit of
    work of their own. A failure to write is logged (the audit type, never a value) and counted
    (``AuditWriteFailed``); it is never raised."""
    rows = audit_events(events, now)
    if not rows:
        return
    try:
        async with storage.begin() as uow:
            for row in rows:
                await uow.audit.record(row)
            await queue_webhooks(uow, rows, now)
            await uow.commit()
    except Exception as exc:  # an audit failure must not fail the request
        for row in rows:
            _log.error("audit row not written: type=%s error=%s", row.type, type(exc).__name__)
            await bus.publish(ev.AuditWriteFailed(type=row.type))


async def publish_failure(
    storage: Storage, bus: EventBus, now: datetime, *events: ev.Event
) -> None:
    """A failure that changed nothing (a wrong password, a throttled login, a wrong MFA code):
    record its audit rows apart (``record_apart``), then publish ``events``. Never raises for
    the audit write."""
    await record_apart(storage, bus, events, now)
    for event in events:
        await bus.publish(event)
