"""Route of docs/reference/operations.md: ``GET /audit-events``.

The route authenticates the caller (401 ``invalid_token``), parses the query (422
``validation_error`` naming the parameter) and hands over to
``application.audit.query.ListAuditEvents``, which asks ``domain.policy`` (403 ``forbidden``
below org_admin, 404 ``not_found`` for another organization's ``org_id``).
"""

from __future__ import annotations

from typing import Any

import attrs
from aiohttp import web

from application.shared.pagination import Page
from domain.audit import AUDIT_EVENT_TYPES, AuditEvent
from entrypoints.config.converters import structure
from entrypoints.http.admin_routes import PAGING, page_query
from entrypoints.http.caller import principal
from entrypoints.http.keys import CONTAINER
from entrypoints.http.requests import request_converter
from entrypoints.http.routing import RouteSpec
from entrypoints.http.views import audit_event_json, json_response


@attrs.frozen
class AuditFilters:
    """The filters of ``GET /audit-events`` besides paging: ``user_id``, ``type``, ``since``
    (strings as given; the use case checks them)."""

    user_id: str | None = None
    type: str | None = None
    since: str | None = None


def _page_json(page: Page[AuditEvent]) -> dict[str, Any]:
    return {"items": [audit_event_json(e) for e in page.items], "next_cursor": page.next_cursor}


async def list_audit_events(request: web.Request) -> web.Response:
    """GET /audit-events?limit&cursor&org_id&user_id&type&since → 200 ``{"items":
    [AuditEvent], "next_cursor"}``, newest first.

    org_admin (its organization) and superadmin (every organization, or ``org_id``); 401
    without a valid token, 403 below org_admin, 404 for another organization's ``org_id``, 422
    for a bad ``limit``, ``cursor``, ``user_id``, ``type`` or ``since``.
    """
    caller = await principal(request)
    names = [f.name for f in attrs.fields(AuditFilters)]
    filters = structure(
        request_converter,
        {n: request.query[n] for n in names if n in request.query},
        AuditFilters,
    )
    page = await request.app[CONTAINER].list_audit_events()(
        caller,
        **page_query(request),
        user_id=filters.user_id,
        event_type=filters.type,
        since=filters.since,
    )
    return json_response(_page_json(page))


_FILTERS = (
    {"name": "user_id", "in": "query", "required": False,
     "description": "only events about this user", "schema": {"type": "string"}},
    {"name": "type", "in": "query", "required": False, "description": "only this event type",
     "schema": {"enum": list(AUDIT_EVENT_TYPES)}},
    {"name": "since", "in": "query", "required": False,
     "description": "only events at or after this RFC 3339 date-time (with a time zone)",
     "schema": {"type": "string", "format": "date-time"}},
)  # fmt: skip

ROUTES = [
    RouteSpec("GET", "/audit-events", list_audit_events,
              "The audit log, newest first (org_admin: own organization; superadmin: any)",
              {200: "AuditEventPage", 401: "Problem", 403: "Problem", 404: "Problem",
               422: "Problem"},
              bearer=True, parameters=(*PAGING, *_FILTERS), tag="admin"),
]  # fmt: skip
"""The route of docs/reference/operations.md, registered by ``create_app`` and described in
OpenAPI."""
