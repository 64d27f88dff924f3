"""Routes of docs/reference/accounts.md: users, roles, groups and members.

Every route authenticates the caller (401 ``invalid_token``) as the ``Principal`` of its user
record loaded afresh (``entrypoints.http.caller.principal``; never from the token's claims, so a
role change applies to the next request), parses the query or body (400 ``malformed_body`` /
422 ``validation_error``) and hands over to a use case of ``application.shared.users`` or
``application.accounts.groups``. Routes never
decide access: the use cases ask ``domain.policy`` (403 ``forbidden``, then 404 ``not_found``
outside the caller's organization, then 403/409/422 of the operation's own rules).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import attrs
from aiohttp import web

from application.accounts.groups import GroupDetail
from application.shared.checks import (
    MAX_NAME_LENGTH,
    MAX_ORG_ID_LENGTH,
    NAME_PATTERN,
    ORG_ID_PATTERN,
)
from application.shared.pagination import DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, Page
from domain.errors import FieldError, ValidationFailed
from domain.model import GroupSummary, Role, User
from entrypoints.config.converters import structure
from entrypoints.http.caller import principal
from entrypoints.http.keys import CONTAINER
from entrypoints.http.requests import read_json, request_converter
from entrypoints.http.routing import RouteSpec, id_parameter, path_id
from entrypoints.http.views import group_json, json_response, user_json

if TYPE_CHECKING:
    from entrypoints.container import Container

# --------------------------------------------------------------------------- request bodies


@attrs.frozen
class RoleChange:
    """Body of PUT /users/{id}/role: ``{"role": "viewer" | "operator" | "org_admin" |
    "superadmin"}`` (the use case checks the value, 422 naming ``role``)."""

    role: str


@attrs.frozen
class UserPatch:
    """Body of PATCH /users/{id}: ``{"disabled": bool}`` and/or ``{"org_id"}`` (the organization
    to move the user to; superadmin only). At least one of them (422 otherwise)."""

    disabled: bool | None = None
    org_id: str | None = None


@attrs.frozen
class NewGroup:
    """Body of POST /groups: ``{"name"}``, and ``"org_id"`` (superadmin; others may name only
    their own organization)."""

    name: str
    org_id: str | None = None


@attrs.frozen
class GroupRename:
    """Body of PATCH /groups/{id}: ``{"name"}``."""

    name: str


# --------------------------------------------------------------------------- helpers

_INTEGER = re.compile(r"[+-]?[0-9]{1,9}")


def _container(request: web.Request) -> Container:
    return request.app[CONTAINER]


@attrs.frozen
class PageQuery:
    """Query string of a listing: ``limit`` (an integer string), ``cursor``, ``org_id``."""

    limit: str | None = None
    cursor: str | None = None
    org_id: str | None = None


def page_query(request: web.Request) -> dict[str, Any]:
    """``limit``, ``cursor`` and ``org_id`` of a listing's query string, as keyword arguments of
    ``ListUsers`` / ``ListGroups``.

    The values pass the request converter (a U+0000 is 422 naming the parameter); ``limit`` must
    be an integer string (422 naming ``limit`` otherwise); its range 1..200 and the cursor are
    checked by the use case. Absent parameters are left to the use case's defaults.
    """
    names = [f.name for f in attrs.fields(PageQuery)]
    query = structure(
        request_converter, {n: request.query[n] for n in names if n in request.query}, PageQuery
    )
    params: dict[str, Any] = {}
    if query.limit is not None:
        if not _INTEGER.fullmatch(query.limit):
            raise ValidationFailed(
                [FieldError("limit", f"must be an integer between 1 and {MAX_PAGE_LIMIT}")]
            )
        params["limit"] = int(query.limit)
    if query.cursor is not None:
        params["cursor"] = query.cursor
    if query.org_id is not None:
        params["org_id"] = query.org_id
    return params


def _user_page_json(page: Page[User]) -> dict[str, Any]:
    return {"items": [user_json(u) for u in page.items], "next_cursor": page.next_cursor}


def _group_page_json(page: Page[GroupSummary]) -> dict[str, Any]:
    return {"items": [group_json(g) for g in page.items], "next_cursor": page.next_cursor}


def _group_detail_json(detail: GroupDetail) -> dict[str, Any]:
    body = group_json(detail.summary)
    body["members"] = [{"id": m.id, "email": m.email} for m in detail.members]
    return body


# --------------------------------------------------------------------------- users


async def list_users(request: web.Request) -> web.Response:
    """GET /users?limit&cursor&org_id → 200 ``{"items": [User], "next_cursor"}``.

    org_admin (own organization) and superadmin (every organization, or ``org_id``); 403 for
    other roles, 404 for another organization's ``org_id``, 422 for a bad ``limit`` or ``cursor``.
    """
    caller = await principal(request)
    page = await _container(request).list_users()(caller, **page_query(request))
    return json_response(_user_page_json(page))


async def get_user(request: web.Request) -> web.Response:
    """GET /users/{id} → 200 ``User``; 403 below org_admin, 404 missing or outside the org."""
    caller = await principal(request)
    user = await _container(request).get_user()(caller, path_id(request, "id"))
    return json_response(user_json(user))


async def set_role(request: web.Request) -> web.Response:
    """PUT /users/{id}/role ``{"role"}`` → 200 ``User``.

    403 below org_admin and for the escalation rules (an org_admin granting superadmin, changing
    a superadmin or its own role), 404 missing or outside the org, 409 ``last_superadmin``,
    422 for an unknown role.
    """
    caller = await principal(request)
    body = await read_json(request, RoleChange)
    user = await _container(request).set_role()(caller, path_id(request, "id"), body.role)
    return json_response(user_json(user))


async def update_user(request: web.Request) -> web.Response:
    """PATCH /users/{id} ``{"disabled"}`` and/or ``{"org_id"}`` → 200 ``User``.

    ``disabled``: org_admin (own organization, users below superadmin, not itself) and
    superadmin; disabling ends the user's sessions. ``org_id``: superadmin only; the user leaves
    the groups of its old organization. 403 / 404 / 409 ``last_superadmin`` / 422 as the use
    case (``application.accounts.lifecycle.UpdateUser``) decides.
    """
    caller = await principal(request)
    body = await read_json(request, UserPatch)
    user = await _container(request).update_user()(
        caller, path_id(request, "id"), disabled=body.disabled, org_id=body.org_id
    )
    return json_response(user_json(user))


async def delete_user(request: web.Request) -> web.Response:
    """DELETE /users/{id} → 204; the user goes with its sessions and memberships. 403 below
    org_admin and for an org_admin on a superadmin or itself, 404 missing or outside the org,
    409 ``last_superadmin``."""
    caller = await principal(request)
    await _container(request).delete_user()(caller, path_id(request, "id"))
    return web.Response(status=204)


# --------------------------------------------------------------------------- groups


async def list_groups(request: web.Request) -> web.Response:
    """GET /groups?limit&cursor&org_id → 200 ``{"items": [Group], "next_cursor"}``.

    Every role, inside its own organization (superadmin: every organization, or ``org_id``);
    404 for another organization's ``org_id``, 422 for a bad ``limit`` or ``cursor``.
    """
    caller = await principal(request)
    page = await _container(request).list_groups()(caller, **page_query(request))
    return json_response(_group_page_json(page))


async def get_group(request: web.Request) -> web.Response:
    """GET /groups/{id} → 200 ``Group`` + ``"members": [{"id", "email"}]``; 404 missing or
    outside the caller's organization."""
    caller = await principal(request)
    detail = await _container(request).get_group()(caller, path_id(request, "id"))
    return json_response(_group_detail_json(detail))


async def create_group(request: web.Request) -> web.Response:
    """POST /groups ``{"name", "org_id"?}`` → 201 ``Group``.

    403 below org_admin, 404 for another organization's ``org_id`` (not superadmin), 409
    ``conflict`` for a duplicate name in the organization, 422 for a bad name.
    """
    caller = await principal(request)
    body = await read_json(request, NewGroup)
    summary = await _container(request).create_group()(caller, body.name, body.org_id)
    return json_response(group_json(summary), status=201)


async def rename_group(request: web.Request) -> web.Response:
    """PATCH /groups/{id} ``{"name"}`` → 200 ``Group``; 403 below org_admin, 404 missing or
    outside the org, 409 duplicate name, 422 bad name."""
    caller = await principal(request)
    body = await read_json(request, GroupRename)
    summary = await _container(request).rename_group()(caller, path_id(request, "id"), body.name)
    return json_response(group_json(summary))


async def delete_group(request: web.Request) -> web.Response:
    """DELETE /groups/{id} → 204 (memberships go with it); 403 below org_admin, 404 missing or
    outside the org."""
    caller = await principal(request)
    await _container(request).delete_group()(caller, path_id(request, "id"))
    return web.Response(status=204)


async def add_member(request: web.Request) -> web.Response:
    """PUT /groups/{id}/members/{user_id} → 204 (idempotent).

    403 below org_admin, 404 for a group or user missing or outside the org, 422 for a user of
    another organization than the group's (superadmin).
    """
    caller = await principal(request)
    await _container(request).add_member()(
        caller, path_id(request, "id"), path_id(request, "user_id")
    )
    return web.Response(status=204)


async def remove_member(request: web.Request) -> web.Response:
    """DELETE /groups/{id}/members/{user_id} → 204 (also when not a member); 403 below
    org_admin, 404 for a group or user missing or outside the org."""
    caller = await principal(request)
    await _container(request).remove_member()(
        caller, path_id(request, "id"), path_id(request, "user_id")
    )
    return web.Response(status=204)


# --------------------------------------------------------------------------- OpenAPI


_USER_ID = id_parameter("id", "user id")
_GROUP_ID = id_parameter("id", "group id")
_MEMBER_ID = id_parameter("user_id", "id of the user (member)")
PAGING = (
    {"name": "limit", "in": "query", "required": False, "description": "page size",
     "schema": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE_LIMIT,
                "default": DEFAULT_PAGE_LIMIT}},
    {"name": "cursor", "in": "query", "required": False,
     "description": "opaque cursor: next_cursor of the previous page (422 for one that is "
                    "not)", "schema": {"type": "string", "minLength": 1}},
    {"name": "org_id", "in": "query", "required": False,
     "description": "organization to list (superadmin: any; others: only their own)",
     "schema": {"type": "string"}},
)  # fmt: skip
_ROLE_BODY = {
    "type": "object",
    "required": ["role"],
    "properties": {"role": {"enum": [r.value for r in Role]}},
}
_ORG_ID = {
    "type": "string",
    "minLength": 1,
    "maxLength": MAX_ORG_ID_LENGTH,
    "pattern": ORG_ID_PATTERN,
}
_USER_PATCH_BODY = {
    "type": "object",
    "minProperties": 1,
    "properties": {
        "disabled": {"type": "boolean",
                     "description": "org_admin (own organization) or superadmin"},
        "org_id": {**_ORG_ID, "description": "superadmin only"},
    },
}  # fmt: skip
_NAME = {"type": "string", "minLength": 1, "maxLength": MAX_NAME_LENGTH, "pattern": NAME_PATTERN}
_NEW_GROUP_BODY = {
    "type": "object",
    "required": ["name"],
    "properties": {"name": _NAME,
                   "org_id": {**_ORG_ID,
                              "description": "superadmin: any organization (default: its own)"}},
}  # fmt: skip
_RENAME_BODY = {"type": "object", "required": ["name"], "properties": {"name": _NAME}}

_P = "Problem"

ROUTES = [
    RouteSpec("GET", "/users", list_users, "List users (org_admin: own organization)",
              {200: "UserPage", 401: _P, 403: _P, 404: _P, 422: _P},
              bearer=True, parameters=PAGING, tag="admin"),
    RouteSpec("GET", "/users/{id}", get_user, "One user",
              {200: "User", 401: _P, 403: _P, 404: _P},
              bearer=True, parameters=(_USER_ID,), tag="admin"),
    RouteSpec("PUT", "/users/{id}/role", set_role, "Set a user's role (escalation rules apply)",
              {200: "User", 400: _P, 401: _P, 403: _P, 404: _P, 409: _P, 413: _P, 422: _P},
              request=_ROLE_BODY, bearer=True, parameters=(_USER_ID,), tag="admin"),
    RouteSpec("PATCH", "/users/{id}", update_user,
              "Disable or enable a user (ends its sessions), or move it to another organization",
              {200: "User", 400: _P, 401: _P, 403: _P, 404: _P, 409: _P, 413: _P, 422: _P},
              request=_USER_PATCH_BODY, bearer=True, parameters=(_USER_ID,), tag="admin"),
    RouteSpec("DELETE", "/users/{id}", delete_user,
              "Delete a user with its sessions and memberships",
              {204: "No Content", 401: _P, 403: _P, 404: _P, 409: _P},
              bearer=True, parameters=(_USER_ID,), tag="admin"),
    RouteSpec("GET", "/groups", list_groups, "List groups (own organization; superadmin: any)",
              {200: "GroupPage", 401: _P, 404: _P, 422: _P},
              bearer=True, parameters=PAGING, tag="admin"),
    RouteSpec("POST", "/groups", create_group, "Create a group",
              {201: "Group", 400: _P, 401: _P, 403: _P, 404: _P, 409: _P, 413: _P, 422: _P},
              request=_NEW_GROUP_BODY, bearer=True, tag="admin"),
    RouteSpec("GET", "/groups/{id}", get_group, "One group with its members",
              {200: "Group", 401: _P, 404: _P},
              bearer=True, parameters=(_GROUP_ID,), tag="admin"),
    RouteSpec("PATCH", "/groups/{id}", rename_group, "Rename a group",
              {200: "Group", 400: _P, 401: _P, 403: _P, 404: _P, 409: _P, 413: _P, 422: _P},
              request=_RENAME_BODY, bearer=True, parameters=(_GROUP_ID,), tag="admin"),
    RouteSpec("DELETE", "/groups/{id}", delete_group, "Delete a group and its memberships",
              {204: "No Content", 401: _P, 403: _P, 404: _P},
              bearer=True, parameters=(_GROUP_ID,), tag="admin"),
    RouteSpec("PUT", "/groups/{id}/members/{user_id}", add_member,
              "Add a member (idempotent; the user must belong to the group's organization)",
              {204: "No Content", 401: _P, 403: _P, 404: _P, 422: _P},
              bearer=True, parameters=(_GROUP_ID, _MEMBER_ID), tag="admin"),
    RouteSpec("DELETE", "/groups/{id}/members/{user_id}", remove_member, "Remove a member",
              {204: "No Content", 401: _P, 403: _P, 404: _P},
              bearer=True, parameters=(_GROUP_ID, _MEMBER_ID), tag="admin"),
]  # fmt: skip
"""The routes of docs/reference/accounts.md, registered by ``create_app`` and described in
OpenAPI."""
