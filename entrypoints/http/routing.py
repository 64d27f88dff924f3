"""``RouteSpec``: one description of a route feeds both the router and /openapi.json."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
from aiohttp import web
from email_validator import SPECIAL_USE_DOMAIN_NAMES

from adapters.email_address import MAX_EMAIL_LENGTH

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

ID_PATTERN = "[0-9a-f]{32}"
"""The form of every resource id the service makes (UUID4 as 32 lower-case hex characters)."""

_ID = re.compile(ID_PATTERN)

NO_SUCH_ID = "0" * 32
"""An id no resource can have (a UUID4 has the version digit 4 in position 13): what a path
segment of another form stands for, so that it reaches the use case as an unknown id."""


def _any_case(word: str) -> str:
    return "".join(f"[{c.upper()}{c.lower()}]" for c in word)


EMAIL_SCHEMA: dict[str, Any] = {
    "type": "string", "format": "email", "maxLength": MAX_EMAIL_LENGTH,
    "not": {"pattern": "@(?:[^@]*\\.)?(?:"
                       + "|".join(_any_case(n) for n in SPECIAL_USE_DOMAIN_NAMES) + ")\\.?$"},
    "description": "an address (RFC 5322 syntax, as the email-validator library checks it; "
                   "not in a special-use domain such as .test or .localhost, RFC 6761)",
}  # fmt: skip
"""The schema of an email a request gives to be checked (``adapters.email_address``)."""

PASSWORD_POLICY = "x-authsvc-password"  # noqa: S105 - a marker, not a password
"""Marks a request string the password policy checks: /openapi.json states the configured
``minLength`` (``auth.password_min_length``) and ``maxLength`` 72 in its place."""


@attrs.frozen
class RouteSpec:
    """One route: registered on the router and described in /openapi.json from the same data.

    ``path`` uses ``{name}`` placeholders, each matching any one segment: ids are opaque to the
    caller (docs/reference/operations.md), read with ``path_id`` once the caller is authenticated.
    ``request`` is the JSON Schema of the body (or None), sent as ``media_type``; ``responses``
    maps status → description;
    ``bearer`` marks routes that need an access token; ``parameters`` are OpenAPI parameter objects.
    ``page`` marks an HTML page for a browser (the hosted pages and the OpenID Connect
    front-channel endpoints of docs/reference/oauth-and-oidc.md): /openapi.json lists it under
    ``x-authsvc-pages`` rather than as an operation, since no API client calls it.
    """

    method: str
    path: str
    handler: Handler
    summary: str
    responses: dict[int, str]
    request: dict[str, Any] | None = None
    bearer: bool = False
    parameters: tuple[dict[str, Any], ...] = ()
    tag: str = "auth"
    media_type: str = "application/json"
    page: bool = False


def path_id(request: web.Request, name: str) -> str:
    """The id in the path segment ``{name}``, for a use case to look up: the segment itself when
    it has the form of an id (``ID_PATTERN``), else ``NO_SUCH_ID``.

    Routes match any segment, so a malformed id meets the same checks in the same order as an
    unknown one — authentication (401), the role (403), then the target (404 ``not_found``)
    — and no odd text (a U+0000, 10 KiB) reaches a use case or storage
    (docs/reference/operations.md).
    """
    value = request.match_info[name]
    return value if _ID.fullmatch(value) else NO_SUCH_ID


def id_parameter(name: str, description: str) -> dict[str, Any]:
    """The OpenAPI parameter of the path segment ``{name}``: a required, opaque string (one that
    names nothing is answered like an unknown id)."""
    return {"name": name, "in": "path", "required": True, "description": description,
            "schema": {"type": "string", "minLength": 1}}  # fmt: skip


def add_routes(app: web.Application, specs: list[RouteSpec]) -> None:
    """Register every spec on ``app``'s router."""
    for spec in specs:
        app.router.add_route(spec.method, spec.path, spec.handler)
