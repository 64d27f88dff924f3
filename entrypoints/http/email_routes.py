"""Routes of docs/reference/accounts.md: password reset and email verification by emailed links,
and an administrator's reset link for a user (``POST /users/{id}/password-reset``, ADR 0046).

Each hands over to ``application.recovery.email_links``; sending happens after the answer, in the
background, so no answer depends on the mail server, and the anonymous ones never tell whether an
email is known.
"""

from __future__ import annotations

from typing import Any

import attrs
from aiohttp import web

from entrypoints.config.converters import UncheckedText
from entrypoints.http.auth_routes import NEW_PASSWORD_SCHEMA
from entrypoints.http.caller import authenticated, principal
from entrypoints.http.keys import CONTAINER
from entrypoints.http.language import request_locale
from entrypoints.http.requests import client_address, read_json
from entrypoints.http.routing import EMAIL_SCHEMA, RouteSpec, id_parameter, path_id


@attrs.frozen
class ForgotPassword:
    """Body of /password/forgot: ``{"email"}``."""

    email: str


@attrs.frozen
class ResetPassword:
    """Body of /password/reset: ``{"token", "new_password"}``. A token no link can hold
    (U+0000 ...) is just an unknown token (400), never a 422 that tells values apart."""

    token: UncheckedText = attrs.field(repr=False)
    new_password: str = attrs.field(repr=False)


@attrs.frozen
class VerifyEmail:
    """Body of /email/verify: ``{"token"}``."""

    token: UncheckedText = attrs.field(repr=False)


def _client(request: web.Request) -> str:
    server = request.app[CONTAINER].config().server
    return client_address(request, server.trusted_proxies)


async def forgot_password(request: web.Request) -> web.Response:
    """POST /password/forgot → 202, empty, for known and unknown emails alike; 429 when
    throttled, 422 for an email whose syntax is wrong."""
    body = await read_json(request, ForgotPassword)
    await (
        request.app[CONTAINER]
        .password_recovery()
        .forgot(body.email, _client(request), locale=request_locale(request))
    )
    return web.Response(status=202)


async def reset_password(request: web.Request) -> web.Response:
    """POST /password/reset → 204; 400 ``invalid_reset_token``; 422 for a new password that
    breaks the policy."""
    body = await read_json(request, ResetPassword)
    await request.app[CONTAINER].password_recovery().reset(body.token, body.new_password)
    return web.Response(status=204)


async def verify_email(request: web.Request) -> web.Response:
    """POST /email/verify → 204; 400 ``invalid_verification_token``."""
    body = await read_json(request, VerifyEmail)
    await request.app[CONTAINER].email_verification().verify(body.token)
    return web.Response(status=204)


async def resend_verification(request: web.Request) -> web.Response:
    """POST /me/email/verify → 202; a new verification message (none once verified); 429
    when throttled."""
    caller = await authenticated(request)
    await (
        request.app[CONTAINER]
        .email_verification()
        .resend(caller.user, _client(request), locale=request_locale(request))
    )
    return web.Response(status=202)


async def send_password_reset(request: web.Request) -> web.Response:
    """POST /users/{id}/password-reset → 202, empty: a reset link mailed to the user (ADR 0046);
    403 below org_admin or an org_admin on a superadmin, 404 missing or of another
    organization, 409 a disabled user or ``email.backend = "none"``, 429 when throttled."""
    caller = await principal(request)
    recovery = request.app[CONTAINER].password_recovery()
    await recovery.send_to_user(caller, path_id(request, "id"), _client(request))
    return web.Response(status=202)


_P = "Problem"
_TOKEN = {"type": "string", "description": "the token from the emailed link"}
_FORGOT: dict[str, Any] = {
    "type": "object",
    "required": ["email"],
    "properties": {"email": EMAIL_SCHEMA},
}
_RESET: dict[str, Any] = {
    "type": "object",
    "required": ["token", "new_password"],
    "properties": {"token": _TOKEN, "new_password": NEW_PASSWORD_SCHEMA},
}
_VERIFY: dict[str, Any] = {"type": "object", "required": ["token"], "properties": {"token": _TOKEN}}

ROUTES = [
    RouteSpec("POST", "/password/forgot", forgot_password,
              "Send a password-reset link (same answer for unknown emails)",
              {202: "Accepted", 400: _P, 413: _P, 422: _P, 429: _P},
              request=_FORGOT, tag="email"),
    RouteSpec("POST", "/password/reset", reset_password,
              "Set a new password with a reset link's token; ends every session",
              {204: "No Content", 400: _P, 413: _P, 422: _P}, request=_RESET, tag="email"),
    RouteSpec("POST", "/email/verify", verify_email,
              "Confirm the email address with a verification link's token",
              {204: "No Content", 400: _P, 413: _P, 422: _P}, request=_VERIFY, tag="email"),
    RouteSpec("POST", "/me/email/verify", resend_verification,
              "Send a new verification link to the caller",
              {202: "Accepted", 401: _P, 429: _P}, bearer=True, tag="email"),
    RouteSpec("POST", "/users/{id}/password-reset", send_password_reset,
              "Mail a user a password-reset link (org_admin: own organization)",
              {202: "Accepted", 401: _P, 403: _P, 404: _P, 409: _P, 429: _P}, bearer=True,
              parameters=(id_parameter("id", "user id"),), tag="email"),
]  # fmt: skip
"""The routes of docs/reference/accounts.md, registered by ``create_app``."""
