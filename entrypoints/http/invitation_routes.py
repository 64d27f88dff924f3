"""Routes of docs/reference/invitations.md: ``/invitations`` (create, list, resend, revoke).

Every route authenticates the caller (401 ``invalid_token``) as the ``Principal`` of its user
record, parses the query or body (400 ``malformed_body`` / 422 ``validation_error``) and hands
over to ``application.accounts.invitations``, whose use cases ask ``domain.policy`` (403
``forbidden``, then 404 ``not_found`` outside the caller's organization, then the invitation's
own rules). No answer carries the link's token: only the invited address receives it.
"""

from __future__ import annotations

from typing import Any

import attrs
from aiohttp import web

from application.accounts.invitations import InvitationView
from application.shared.checks import MAX_ORG_ID_LENGTH, ORG_ID_PATTERN
from application.shared.pagination import Page
from domain.invitations import MAX_INVITATION_GROUPS
from domain.model import Role
from entrypoints.http.admin_routes import PAGING, page_query
from entrypoints.http.caller import principal
from entrypoints.http.keys import CONTAINER
from entrypoints.http.requests import read_json
from entrypoints.http.routing import EMAIL_SCHEMA, RouteSpec, id_parameter, path_id
from entrypoints.http.views import iso, json_response


@attrs.frozen
class NewInvitation:
    """Body of POST /invitations: ``{"email", "role", "group_ids"?, "org_id"?}`` (the use case
    checks each value, 422 naming the field)."""

    email: str
    role: str
    group_ids: list[str] | None = None
    org_id: str | None = None


def invitation_json(view: InvitationView) -> dict[str, Any]:
    """Contract ``Invitation``: id, org_id, email, role, group_ids, invited_by, created_at,
    expires_at, status — never the link's token or its hash."""
    i = view.invitation
    return {
        "id": i.id,
        "org_id": i.org_id,
        "email": i.email,
        "role": i.role.value,
        "group_ids": list(i.group_ids),
        "invited_by": i.invited_by,
        "created_at": iso(i.created_at),
        "expires_at": iso(i.expires_at),
        "status": view.status.value,
    }


def _page_json(page: Page[InvitationView]) -> dict[str, Any]:
    return {"items": [invitation_json(v) for v in page.items], "next_cursor": page.next_cursor}


async def create_invitation(request: web.Request) -> web.Response:
    """POST /invitations → 201 ``Invitation``; the message with the link goes to the email.

    403 below org_admin and for an org_admin inviting a superadmin, 404 for another
    organization's ``org_id`` (not superadmin), 409 ``email_taken`` when an account has the
    email, 409 ``conflict`` for a pending invitation of the email into the organization, 422
    for a bad email, role or group (missing or of another organization).
    """
    caller = await principal(request)
    body = await read_json(request, NewInvitation)
    view = await request.app[CONTAINER].create_invitation()(
        caller, body.email, body.role, body.group_ids, body.org_id
    )
    return json_response(invitation_json(view), status=201)


async def list_invitations(request: web.Request) -> web.Response:
    """GET /invitations?limit&cursor&org_id → 200 ``{"items": [Invitation], "next_cursor"}``,
    keyset by id; org_admin (its organization), superadmin (any, or ``org_id``)."""
    caller = await principal(request)
    page = await request.app[CONTAINER].list_invitations()(caller, **page_query(request))
    return json_response(_page_json(page))


async def resend_invitation(request: web.Request) -> web.Response:
    """POST /invitations/{id}/resend → 200 ``Invitation`` with a new link and expiry (the old
    link stops working); 409 ``conflict`` when accepted or revoked."""
    caller = await principal(request)
    view = await request.app[CONTAINER].resend_invitation()(caller, path_id(request, "id"))
    return json_response(invitation_json(view))


async def revoke_invitation(request: web.Request) -> web.Response:
    """DELETE /invitations/{id} → 204; the link stops working (idempotent); 409 ``conflict``
    when accepted already."""
    caller = await principal(request)
    await request.app[CONTAINER].revoke_invitation()(caller, path_id(request, "id"))
    return web.Response(status=204)


_ID = id_parameter("id", "invitation id")
_BODY = {
    "type": "object",
    "required": ["email", "role"],
    "properties": {
        "email": EMAIL_SCHEMA,
        "role": {"enum": [r.value for r in Role],
                 "description": "org_admin may grant viewer, operator, org_admin"},
        "group_ids": {"type": "array", "maxItems": MAX_INVITATION_GROUPS,
                      "items": {"type": "string", "minLength": 1, "maxLength": 128},
                      "description": "groups of the organization the account joins"},
        "org_id": {"type": "string", "minLength": 1, "maxLength": MAX_ORG_ID_LENGTH,
                   "pattern": ORG_ID_PATTERN,
                   "description": "superadmin: any organization (default: its own)"},
    },
}  # fmt: skip

_P = "Problem"

ROUTES = [
    RouteSpec("POST", "/invitations", create_invitation,
              "Invite an email into an organization with a role and groups (mails the link)",
              {201: "Invitation", 400: _P, 401: _P, 403: _P, 404: _P, 409: _P, 413: _P, 422: _P},
              request=_BODY, bearer=True, tag="admin"),
    RouteSpec("GET", "/invitations", list_invitations,
              "List invitations (org_admin: own organization; superadmin: any)",
              {200: "InvitationPage", 401: _P, 403: _P, 404: _P, 422: _P},
              bearer=True, parameters=PAGING, tag="admin"),
    RouteSpec("POST", "/invitations/{id}/resend", resend_invitation,
              "Send an invitation again with a new link (the old one stops working)",
              {200: "Invitation", 401: _P, 403: _P, 404: _P, 409: _P},
              bearer=True, parameters=(_ID,), tag="admin"),
    RouteSpec("DELETE", "/invitations/{id}", revoke_invitation,
              "Revoke an invitation (its link stops working)",
              {204: "No Content", 401: _P, 403: _P, 404: _P, 409: _P},
              bearer=True, parameters=(_ID,), tag="admin"),
]  # fmt: skip
"""The routes of docs/reference/invitations.md, registered by ``create_app`` and described in
OpenAPI."""
