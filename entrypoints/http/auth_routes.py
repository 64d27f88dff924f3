"""Routes of docs/reference/tokens-and-sessions.md: /register, /login, /me, /refresh, /logout,
/me/password."""

from __future__ import annotations

import attrs
from aiohttp import web

from application.login.auth import AuthService
from application.sessions.tokens import TokenPair
from application.shared.settings import AuthSettings
from domain.model import BCRYPT_MAX_PASSWORD_BYTES
from entrypoints.config.converters import UncheckedText
from entrypoints.http.bearer import bearer_token
from entrypoints.http.caller import authenticated
from entrypoints.http.keys import CONTAINER
from entrypoints.http.language import request_locale
from entrypoints.http.requests import client_address, read_json, user_agent
from entrypoints.http.routing import EMAIL_SCHEMA, PASSWORD_POLICY, RouteSpec
from entrypoints.http.views import json_response, user_json


@attrs.frozen
class Credentials:
    """Body of /register."""

    email: str
    password: str = attrs.field(repr=False)


@attrs.frozen
class LoginCredentials:
    """Body of /login. Its strings may hold anything JSON can: a value no user can have (an email
    with U+0000, say) is ``invalid_credentials`` like any unknown email, never a 422 that would
    tell such values apart."""

    email: UncheckedText
    password: UncheckedText = attrs.field(repr=False)


@attrs.frozen
class RefreshRequest:
    """Body of /refresh and /logout (RFC 6749 section 6, ``refresh_token``)."""

    refresh_token: str = attrs.field(repr=False)


@attrs.frozen
class PasswordChange:
    """Body of /me/password."""

    old_password: str = attrs.field(repr=False)
    new_password: str = attrs.field(repr=False)


def _auth(request: web.Request) -> AuthService:
    return request.app[CONTAINER].auth_service()


def pair_json(pair: TokenPair) -> web.Response:
    """The contract ``TokenPair`` answer (200, JSON)."""
    return json_response(
        {
            "access_token": pair.access_token,
            "refresh_token": pair.refresh_token,
            "token_type": pair.token_type,
            "expires_in": pair.expires_in,
            "refresh_expires_in": pair.refresh_expires_in,
        },
        headers={"Cache-Control": "no-store", "Pragma": "no-cache"},  # RFC 6749 section 5.1
    )


async def register(request: web.Request) -> web.Response:
    """POST /register → 201 User."""
    body = await read_json(request, Credentials)
    user = await _auth(request).register(body.email, body.password, locale=request_locale(request))
    return json_response(user_json(user), status=201)


async def login(request: web.Request) -> web.Response:
    """POST /login → 200 TokenPair; 403 ``account_disabled`` with the right password to a
    disabled account. The session records the ``User-Agent`` and the client address."""
    body = await read_json(request, LoginCredentials)
    server = request.app[CONTAINER].config().server
    client = client_address(request, server.trusted_proxies)
    pair = await _auth(request).login(body.email, body.password, client, user_agent(request))
    return pair_json(pair)


async def me(request: web.Request) -> web.Response:
    """GET /me → 200 User with groups."""
    profile = await _auth(request).profile(bearer_token(request))
    return json_response(user_json(profile.user, profile.groups))


async def refresh(request: web.Request) -> web.Response:
    """POST /refresh → 200 TokenPair (one-time rotation)."""
    body = await read_json(request, RefreshRequest)
    return pair_json(await _auth(request).refresh(body.refresh_token))


async def logout(request: web.Request) -> web.Response:
    """POST /logout → 204; revokes the token's session; unknown tokens also 204."""
    body = await read_json(request, RefreshRequest)
    await _auth(request).logout(body.refresh_token)
    return web.Response(status=204)


async def change_password(request: web.Request) -> web.Response:
    """POST /me/password → 204; ends every refresh token of the user; 403
    ``invalid_old_password`` for a wrong old password (429 past the login throttle)."""
    caller = await authenticated(request)
    body = await read_json(request, PasswordChange)
    client = client_address(request, request.app[CONTAINER].config().server.trusted_proxies)
    await _auth(request).change_password(
        caller.user.id, body.old_password, body.new_password, client
    )
    return web.Response(status=204)


NEW_PASSWORD_SCHEMA = {
    "type": "string",
    PASSWORD_POLICY: True,
    "description": (
        "at least auth.password_min_length characters (default "
        f"{attrs.fields(AuthSettings).password_min_length.default}), "
        f"at most {BCRYPT_MAX_PASSWORD_BYTES} UTF-8 bytes"
    ),
}
"""A password the policy checks (``domain.model.check_password_policy``); the minimum is
configurable: the document states the one in force (``openapi.PASSWORD_POLICY``)."""
_CREDENTIALS = {
    "type": "object",
    "required": ["email", "password"],
    "properties": {"email": EMAIL_SCHEMA, "password": NEW_PASSWORD_SCHEMA},
}
_LOGIN = {
    "type": "object",
    "required": ["email", "password"],
    "properties": {"email": {"type": "string"}, "password": {"type": "string"}},
}
"""Login takes any strings: one that names no account is ``invalid_credentials`` (401)."""
_REFRESH = {
    "type": "object",
    "required": ["refresh_token"],
    "properties": {"refresh_token": {"type": "string"}},
}

ROUTES = [
    RouteSpec("POST", "/register", register, "Register a user (role viewer)",
              {201: "User", 400: "Problem", 403: "Problem", 409: "Problem", 413: "Problem",
               422: "Problem"},
              request=_CREDENTIALS),
    RouteSpec("POST", "/login", login, "Log in for an access token and a refresh token",
              {200: "TokenPair", 400: "Problem", 401: "Problem", 403: "Problem", 422: "Problem",
               429: "Problem"},
              request=_LOGIN),
    RouteSpec("GET", "/me", me, "The caller's profile with its group ids",
              {200: "User", 401: "Problem"}, bearer=True),
    RouteSpec("POST", "/refresh", refresh, "Rotate a refresh token for a new pair",
              {200: "TokenPair", 400: "Problem", 401: "Problem", 422: "Problem"},
              request=_REFRESH),
    RouteSpec("POST", "/logout", logout, "Revoke the session of a refresh token",
              {204: "No Content", 400: "Problem", 422: "Problem"}, request=_REFRESH),
    RouteSpec("POST", "/me/password", change_password,
              "Change the caller's password; ends all its refresh tokens",
              {204: "No Content", 400: "Problem", 401: "Problem", 403: "Problem", 422: "Problem",
               429: "Problem"},
              request={
                  "type": "object",
                  "required": ["old_password", "new_password"],
                  "properties": {"old_password": {"type": "string"},
                                 "new_password": NEW_PASSWORD_SCHEMA},
              },
              bearer=True),
]  # fmt: skip
