"""JSON views: domain objects as the contract's JSON shapes, and JSON responses encoded by
orjson (RFC 8259; UTF-8)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import orjson
from aiohttp import web

from domain.audit import AuditEvent
from domain.model import GroupSummary, Session, User


def json_response(
    data: Any,
    *,
    status: int = 200,
    headers: Mapping[str, str] | None = None,
    content_type: str = "application/json",
) -> web.Response:
    """A response whose body is ``data`` as JSON (orjson: UTF-8, no NaN; raises
    ``orjson.JSONEncodeError`` for a value JSON cannot hold — a bug, not input)."""
    return web.Response(
        body=orjson.dumps(data), status=status, headers=headers, content_type=content_type
    )


def iso(ts: datetime) -> str:
    """RFC 3339 UTC timestamp, e.g. ``2026-01-01T00:00:00Z``."""
    return ts.isoformat().replace("+00:00", "Z")


def user_json(user: User, groups: list[str] | None = None) -> dict[str, Any]:
    """Contract ``User``: id, email, role, org_id, created_at, disabled, email_verified,
    mfa_enabled, passkeys (how many) (+ groups).
    Never a password hash."""
    body: dict[str, Any] = {
        "id": user.id,
        "email": user.email,
        "role": user.role.value,
        "org_id": user.org_id,
        "created_at": iso(user.created_at),
        "disabled": user.disabled,
        "email_verified": user.email_verified,
        "mfa_enabled": user.mfa_enabled,
        "passkeys": user.passkeys,
    }
    if groups is not None:
        body["groups"] = groups
    return body


def group_json(summary: GroupSummary) -> dict[str, Any]:
    """Contract ``Group``: id, name, org_id, member_count, created_at."""
    g = summary.group
    return {
        "id": g.id,
        "name": g.name,
        "org_id": g.org_id,
        "member_count": summary.member_count,
        "created_at": iso(g.created_at),
    }


def session_json(session: Session, client_name: str | None = None) -> dict[str, Any]:
    """Contract ``Session`` (sections 7 and 15): id, created_at, last_used_at, expires_at,
    user_agent, client_address, client_id and client_name (of the OpenID Connect client that
    started it; both null for a JSON-API session). Never a token or a hash."""
    return {
        "id": session.id,
        "created_at": iso(session.created_at),
        "last_used_at": iso(session.last_used_at),
        "expires_at": iso(session.expires_at),
        "user_agent": session.user_agent,
        "client_address": session.client_address,
        "client_id": session.client_id,
        "client_name": client_name,
    }


def audit_event_json(event: AuditEvent) -> dict[str, Any]:
    """Contract ``AuditEvent`` (section 11): id, type, occurred_at, actor_id, user_id, org_id,
    client_address, user_agent, details (ids and reasons only)."""
    return {
        "id": event.id,
        "type": event.type,
        "occurred_at": iso(event.occurred_at),
        "actor_id": event.actor_id,
        "user_id": event.user_id,
        "org_id": event.org_id,
        "client_address": event.client_address,
        "user_agent": event.user_agent,
        "details": event.details_dict(),
    }
