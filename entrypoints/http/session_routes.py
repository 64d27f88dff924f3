"""Routes of docs/reference/tokens-and-sessions.md (sessions) and ``DELETE /me`` of section 8.

Each route authenticates the caller (401 ``invalid_token``; a disabled user's token too) and
hands over to a use case of ``application.sessions.manage`` or
``application.accounts.lifecycle``; access to another user's sessions is decided by
``domain.policy`` in the use case.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
from aiohttp import web

from application.sessions.manage import ListedSession
from entrypoints.http.caller import authenticated, principal
from entrypoints.http.keys import CONTAINER
from entrypoints.http.requests import client_address, read_json
from entrypoints.http.routing import RouteSpec, id_parameter, path_id
from entrypoints.http.views import json_response, session_json

if TYPE_CHECKING:
    from entrypoints.container import Container


@attrs.frozen
class PasswordConfirmation:
    """Body of DELETE /me: ``{"password"}``, the caller's current password."""

    password: str = attrs.field(repr=False)


def _container(request: web.Request) -> Container:
    return request.app[CONTAINER]


def _sessions_json(sessions: list[ListedSession]) -> web.Response:
    return json_response({"items": [session_json(s.session, s.client_name) for s in sessions]})


async def list_my_sessions(request: web.Request) -> web.Response:
    """GET /me/sessions → 200 ``{"items": [Session]}``, newest first, live sessions only."""
    caller = await principal(request)
    return _sessions_json(await _container(request).list_sessions()(caller))


async def end_my_session(request: web.Request) -> web.Response:
    """DELETE /me/sessions/{id} → 204; 404 for an unknown session or another user's."""
    caller = await principal(request)
    await _container(request).end_own_session()(caller, path_id(request, "id"))
    return web.Response(status=204)


async def end_my_sessions(request: web.Request) -> web.Response:
    """DELETE /me/sessions → 204; every session of the caller ends."""
    caller = await principal(request)
    await _container(request).end_own_sessions()(caller)
    return web.Response(status=204)


async def list_user_sessions(request: web.Request) -> web.Response:
    """GET /users/{id}/sessions → 200 ``{"items": [Session]}``; 403 below org_admin, 404 for a
    user missing or outside an org_admin's organization."""
    caller = await principal(request)
    sessions = await _container(request).list_sessions()(caller, path_id(request, "id"))
    return _sessions_json(sessions)


async def end_user_sessions(request: web.Request) -> web.Response:
    """DELETE /users/{id}/sessions → 204; 403 below org_admin and for an org_admin on a
    superadmin, 404 for a user missing or outside an org_admin's organization."""
    caller = await principal(request)
    await _container(request).end_user_sessions()(caller, path_id(request, "id"))
    return web.Response(status=204)


async def end_user_session(request: web.Request) -> web.Response:
    """DELETE /users/{id}/sessions/{sid} → 204; 403 below org_admin and for an org_admin on a
    superadmin, 404 for a user missing or outside an org_admin's organization, or a session
    that is not that user's."""
    caller = await principal(request)
    await _container(request).end_user_session()(
        caller, path_id(request, "id"), path_id(request, "sid")
    )
    return web.Response(status=204)


async def delete_me(request: web.Request) -> web.Response:
    """DELETE /me ``{"password"}`` → 204; 403 ``invalid_old_password`` for a wrong password
    (429 past the login throttle), 409 ``last_superadmin``."""
    caller = await authenticated(request)
    body = await read_json(request, PasswordConfirmation)
    container = _container(request)
    client = client_address(request, container.config().server.trusted_proxies)
    await container.delete_own_account()(caller.user, body.password, client)
    return web.Response(status=204)


_P = "Problem"
_SESSION_ID = id_parameter("id", "session id")
_USER_ID = {**_SESSION_ID, "description": "user id"}
_PASSWORD_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["password"],
    "properties": {"password": {"type": "string"}},
}

ROUTES = [
    RouteSpec("GET", "/me/sessions", list_my_sessions, "The caller's live sessions, newest first",
              {200: "SessionList", 401: _P}, bearer=True, tag="sessions"),
    RouteSpec("DELETE", "/me/sessions", end_my_sessions, "End every session of the caller",
              {204: "No Content", 401: _P}, bearer=True, tag="sessions"),
    RouteSpec("DELETE", "/me/sessions/{id}", end_my_session, "End one of the caller's sessions",
              {204: "No Content", 401: _P, 404: _P},
              bearer=True, parameters=(_SESSION_ID,), tag="sessions"),
    RouteSpec("GET", "/users/{id}/sessions", list_user_sessions,
              "A user's live sessions (org_admin: own organization)",
              {200: "SessionList", 401: _P, 403: _P, 404: _P},
              bearer=True, parameters=(_USER_ID,), tag="sessions"),
    RouteSpec("DELETE", "/users/{id}/sessions", end_user_sessions,
              "End every session of a user (org_admin: own organization, not a superadmin)",
              {204: "No Content", 401: _P, 403: _P, 404: _P},
              bearer=True, parameters=(_USER_ID,), tag="sessions"),
    RouteSpec("DELETE", "/users/{id}/sessions/{sid}", end_user_session,
              "End one session of a user (org_admin: own organization, not a superadmin)",
              {204: "No Content", 401: _P, 403: _P, 404: _P},
              bearer=True, parameters=(_USER_ID, id_parameter("sid", "session id")),
              tag="sessions"),
    RouteSpec("DELETE", "/me", delete_me, "Delete the caller's account (needs its password)",
              {204: "No Content", 400: _P, 401: _P, 403: _P, 409: _P, 413: _P, 422: _P,
               429: _P},
              request=_PASSWORD_BODY, bearer=True, tag="sessions"),
]  # fmt: skip
"""The routes of docs/reference/tokens-and-sessions.md and DELETE /me, registered by
``create_app``."""
