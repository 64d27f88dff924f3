"""Changing the email over the JSON API (docs/reference/accounts.md, "Changing the email"; ADR
0043): ``POST /me/email`` mails a confirmation link to the new address (202, the same whether
or not that address is taken), ``POST /email/change`` takes the link's token and moves the
account. Both hand over to ``application.recovery.email_change``."""

from __future__ import annotations

from typing import Any

import attrs
from aiohttp import web

from entrypoints.config.converters import UncheckedText
from entrypoints.http.caller import authenticated
from entrypoints.http.keys import CONTAINER
from entrypoints.http.language import request_locale
from entrypoints.http.requests import client_address, read_json
from entrypoints.http.routing import EMAIL_SCHEMA, RouteSpec


@attrs.frozen
class EmailChangeRequest:
    """Body of POST /me/email: ``{"new_email", "password"}``."""

    new_email: str
    password: str = attrs.field(repr=False)


@attrs.frozen
class EmailChangeConfirmation:
    """Body of POST /email/change: ``{"token"}`` (a token no link can hold is just unknown)."""

    token: UncheckedText = attrs.field(repr=False)


async def request_email_change(request: web.Request) -> web.Response:
    """POST /me/email → 202 (a link to the new address); 403 ``invalid_old_password`` (429 past
    the login throttle), 422 for a malformed or the current address."""
    caller = await authenticated(request)
    body = await read_json(request, EmailChangeRequest)
    container = request.app[CONTAINER]
    client = client_address(request, container.config().server.trusted_proxies)
    await container.email_change().request(
        caller.user.id, body.new_email, body.password, client, request_locale(request)
    )
    return web.Response(status=202)


async def confirm_email_change(request: web.Request) -> web.Response:
    """POST /email/change → 204 (the account's email is the new one, verified); 400
    ``invalid_verification_token``; 409 ``email_taken`` when the address was taken meanwhile."""
    body = await read_json(request, EmailChangeConfirmation)
    await request.app[CONTAINER].email_change().confirm(body.token, request_locale(request))
    return web.Response(status=204)


_P = "Problem"
_REQUEST: dict[str, Any] = {
    "type": "object",
    "required": ["new_email", "password"],
    "properties": {"new_email": EMAIL_SCHEMA, "password": {"type": "string"}},
}
_CONFIRM: dict[str, Any] = {
    "type": "object",
    "required": ["token"],
    "properties": {"token": {"type": "string", "description": "the token from the emailed link"}},
}

ROUTES = [
    RouteSpec("POST", "/me/email", request_email_change,
              "Change the caller's email: a confirmation link goes to the new address",
              {202: "Accepted", 400: _P, 401: _P, 403: _P, 413: _P, 422: _P, 429: _P},
              request=_REQUEST, bearer=True, tag="email"),
    RouteSpec("POST", "/email/change", confirm_email_change,
              "Confirm an email change with the link's token",
              {204: "No Content", 400: _P, 409: _P, 413: _P, 422: _P},
              request=_CONFIRM, tag="email"),
]  # fmt: skip
"""The email-change routes of docs/reference/accounts.md, registered by ``create_app``."""
