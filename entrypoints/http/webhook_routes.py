"""Routes of docs/reference/webhooks.md: ``/webhooks`` (create, list, show, change, delete,
rotate the secret, the deliveries, a test message).

Every route authenticates the caller (401 ``invalid_token``) as the ``Principal`` of its user
record, parses the body (400 ``malformed_body`` / 422 ``validation_error``) and hands over to
``application.integration.manage``, whose use cases ask ``domain.policy`` (403 ``forbidden``
below org_admin, then 404 ``not_found`` for another organization's endpoint). The signing
secret is in the answers of create and rotate only.
"""

from __future__ import annotations

from typing import Any

import attrs
from aiohttp import web

from application.integration.manage import WithSecret
from application.shared.checks import MAX_ORG_ID_LENGTH, ORG_ID_PATTERN
from application.shared.pagination import Page
from domain.audit import AUDIT_EVENT_TYPES
from domain.webhooks import MAX_DESCRIPTION_LENGTH, MAX_URL_LENGTH, Webhook, WebhookDelivery
from entrypoints.http.admin_routes import PAGING, page_query
from entrypoints.http.caller import principal
from entrypoints.http.keys import CONTAINER
from entrypoints.http.problems import HttpProblem
from entrypoints.http.requests import parse_json_object, read_body, read_json
from entrypoints.http.routing import RouteSpec, id_parameter, path_id
from entrypoints.http.views import iso, json_response


@attrs.frozen
class NewWebhook:
    """Body of POST /webhooks: ``{"url", "event_types", "description"?, "enabled"?,
    "org_id"?}`` (the use case checks each value, 422 naming the field)."""

    url: str
    event_types: list[str]
    description: str | None = None
    enabled: bool = True
    org_id: str | None = None


def webhook_json(hook: Webhook) -> dict[str, Any]:
    """Contract ``Webhook``: id, org_id, url, event_types, description, enabled,
    disabled_reason, failing_since, created_at, updated_at — never the secret."""
    return {
        "id": hook.id, "org_id": hook.org_id, "url": hook.url,
        "event_types": list(hook.event_types), "description": hook.description,
        "enabled": hook.enabled, "disabled_reason": hook.disabled_reason,
        "failing_since": None if hook.failing_since is None else iso(hook.failing_since),
        "created_at": iso(hook.created_at), "updated_at": iso(hook.updated_at),
    }  # fmt: skip


def _with_secret(made: WithSecret) -> dict[str, Any]:
    return {**webhook_json(made.webhook), "secret": made.secret}


def delivery_json(d: WebhookDelivery) -> dict[str, Any]:
    """Contract ``WebhookDelivery``: id, message_id (the ``webhook-id``), event_type, attempt,
    attempted_at, status_code (null: no answer), error (null when delivered), delivered."""
    return {
        "id": d.id, "message_id": d.message_id, "event_type": d.event_type,
        "attempt": d.attempt, "attempted_at": iso(d.attempted_at),
        "status_code": d.status_code, "error": d.error, "delivered": d.delivered,
    }  # fmt: skip


def _page(page: Page[Any], render: Any) -> dict[str, Any]:
    return {"items": [render(x) for x in page.items], "next_cursor": page.next_cursor}


async def create_webhook(request: web.Request) -> web.Response:
    """POST /webhooks → 201 ``Webhook`` with ``secret`` (shown this once)."""
    caller = await principal(request)
    body = await read_json(request, NewWebhook)
    made = await request.app[CONTAINER].create_webhook()(
        caller, body.url, body.event_types, body.description, body.enabled, body.org_id
    )
    return json_response(_with_secret(made), status=201)


async def list_webhooks(request: web.Request) -> web.Response:
    """GET /webhooks?limit&cursor&org_id → 200 ``{"items": [Webhook], "next_cursor"}``."""
    caller = await principal(request)
    page = await request.app[CONTAINER].list_webhooks()(caller, **page_query(request))
    return json_response(_page(page, webhook_json))


async def get_webhook(request: web.Request) -> web.Response:
    """GET /webhooks/{id} → 200 ``Webhook``."""
    caller = await principal(request)
    hook = await request.app[CONTAINER].get_webhook()(caller, path_id(request, "id"))
    return json_response(webhook_json(hook))


async def update_webhook(request: web.Request) -> web.Response:
    """PATCH /webhooks/{id} with any of url, event_types, description, enabled (other members
    are ignored, as on every route) → 200 ``Webhook``; 422 for a bad value or none of them."""
    caller = await principal(request)
    if request.content_type != "application/json":
        raise HttpProblem(400, "malformed_body", "Content-Type must be application/json")
    changes = parse_json_object(await read_body(request))
    hook = await request.app[CONTAINER].update_webhook()(caller, path_id(request, "id"), changes)
    return json_response(webhook_json(hook))


async def delete_webhook(request: web.Request) -> web.Response:
    """DELETE /webhooks/{id} → 204."""
    caller = await principal(request)
    await request.app[CONTAINER].delete_webhook()(caller, path_id(request, "id"))
    return web.Response(status=204)


async def rotate_webhook_secret(request: web.Request) -> web.Response:
    """POST /webhooks/{id}/secret → 200 ``Webhook`` with the new ``secret`` (shown once)."""
    caller = await principal(request)
    made = await request.app[CONTAINER].rotate_webhook_secret()(caller, path_id(request, "id"))
    return json_response(_with_secret(made))


async def list_webhook_deliveries(request: web.Request) -> web.Response:
    """GET /webhooks/{id}/deliveries?limit&cursor → 200 ``{"items": [WebhookDelivery],
    "next_cursor"}``, newest first."""
    caller = await principal(request)
    query = page_query(request)
    query.pop("org_id", None)
    page = await request.app[CONTAINER].list_webhook_deliveries()(
        caller, path_id(request, "id"), **query
    )
    return json_response(_page(page, delivery_json))


async def test_webhook(request: web.Request) -> web.Response:
    """POST /webhooks/{id}/test → 202 ``{"message_id"}``: a ``webhook.test`` message queued."""
    caller = await principal(request)
    message_id = await request.app[CONTAINER].test_webhook()(caller, path_id(request, "id"))
    return json_response({"message_id": message_id}, status=202)


_ID = id_parameter("id", "webhook id")
_TYPES = {"type": "array", "minItems": 1, "uniqueItems": True,
          "items": {"enum": list(AUDIT_EVENT_TYPES)}}  # fmt: skip
_FIELDS: dict[str, Any] = {
    "url": {"type": "string", "format": "uri", "maxLength": MAX_URL_LENGTH,
            "description": "https; not on a loopback, private or link-local network unless "
                           "webhooks.allow_private_targets"},
    "event_types": _TYPES,
    "description": {"type": ["string", "null"], "maxLength": MAX_DESCRIPTION_LENGTH},
    "enabled": {"type": "boolean", "default": True},
}  # fmt: skip
_BODY = {
    "type": "object", "required": ["url", "event_types"],
    "properties": {**_FIELDS, "org_id": {
        "type": "string", "minLength": 1, "maxLength": MAX_ORG_ID_LENGTH,
        "pattern": ORG_ID_PATTERN, "description": "superadmin: any organization"}},
}  # fmt: skip
_PATCH = {"type": "object", "minProperties": 1, "properties": _FIELDS}
_P = "Problem"
_PAGING = tuple(p for p in PAGING if p["name"] != "org_id")

ROUTES = [
    RouteSpec("POST", "/webhooks", create_webhook,
              "Add a webhook endpoint (its signing secret is in this answer only)",
              {201: "WebhookWithSecret", 400: _P, 401: _P, 403: _P, 404: _P, 413: _P, 422: _P},
              request=_BODY, bearer=True, tag="admin"),
    RouteSpec("GET", "/webhooks", list_webhooks,
              "List webhook endpoints (org_admin: own organization; superadmin: any)",
              {200: "WebhookPage", 401: _P, 403: _P, 404: _P, 422: _P},
              bearer=True, parameters=PAGING, tag="admin"),
    RouteSpec("GET", "/webhooks/{id}", get_webhook, "Show a webhook endpoint",
              {200: "Webhook", 401: _P, 403: _P, 404: _P},
              bearer=True, parameters=(_ID,), tag="admin"),
    RouteSpec("PATCH", "/webhooks/{id}", update_webhook,
              "Change a webhook endpoint's URL, event types, description or enabled",
              {200: "Webhook", 400: _P, 401: _P, 403: _P, 404: _P, 413: _P, 422: _P},
              request=_PATCH, bearer=True, parameters=(_ID,), tag="admin"),
    RouteSpec("DELETE", "/webhooks/{id}", delete_webhook, "Delete a webhook endpoint",
              {204: "No Content", 401: _P, 403: _P, 404: _P},
              bearer=True, parameters=(_ID,), tag="admin"),
    RouteSpec("POST", "/webhooks/{id}/secret", rotate_webhook_secret,
              "Rotate a webhook endpoint's signing secret (the new one is in this answer only)",
              {200: "WebhookWithSecret", 401: _P, 403: _P, 404: _P},
              bearer=True, parameters=(_ID,), tag="admin"),
    RouteSpec("GET", "/webhooks/{id}/deliveries", list_webhook_deliveries,
              "The delivery attempts of a webhook endpoint, newest first",
              {200: "WebhookDeliveryPage", 401: _P, 403: _P, 404: _P, 422: _P},
              bearer=True, parameters=(_ID, *_PAGING), tag="admin"),
    RouteSpec("POST", "/webhooks/{id}/test", test_webhook,
              "Send a webhook.test message to the endpoint (through the outbox)",
              {202: "WebhookTest", 401: _P, 403: _P, 404: _P},
              bearer=True, parameters=(_ID,), tag="admin"),
]  # fmt: skip
"""The routes of docs/reference/webhooks.md, registered by ``create_app`` and described in
OpenAPI."""
