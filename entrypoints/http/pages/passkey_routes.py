"""Passkeys on the hosted pages (docs/reference/mfa-and-passkeys.md and
docs/reference/oauth-and-oidc.md; ADR 0033): the JSON endpoints ``/ui/passkey.js`` calls from
``/ui/login`` and ``/ui/login/mfa``.

A passkey ceremony runs in JavaScript (``navigator.credentials.get``), so its answer is a JSON
``fetch``, not a form: these POSTs take JSON and answer JSON — ``{"redirect": return_to}`` with
the hosted-session cookie set (a script cannot usefully follow a 303; it assigns
``location``) — instead of the 303 of the pages' forms. They are CSRF-checked like every
``/ui`` POST (``Origin`` and the double-submit ``csrf_token``, here a member of the body) and
call the JSON API's use cases through ``HostedLogin``: same ceremony, throttle, answers and
audit, a hosted session opened instead of a token pair. Every refusal after the CSRF check is
401 with the page's one message (problem+json, code ``invalid_passkey`` on the login page,
``invalid_mfa_code`` on the second step), whatever its cause: an unknown or used ceremony, a
refused assertion, a throttled client, a disabled account.

The options of a passwordless login come from the JSON API (``POST /login/passkey/options``);
those of the second step from ``/ui/login/mfa/passkey/options``, which reads the ``mfa_token``
from its HttpOnly cookie (the script cannot).
"""

from __future__ import annotations

from typing import Any

import attrs
from aiohttp import web

from adapters.i18n.catalogs import translations
from domain.errors import DomainError, StorageFault
from domain.texts import Text
from entrypoints.http.keys import CONTAINER
from entrypoints.http.language import page_locale
from entrypoints.http.oidc import client_of
from entrypoints.http.pages.routes import CODE_FAILED, LOGIN_FAILED
from entrypoints.http.pages.web import (
    PAGE_HEADERS,
    clear_cookie,
    cookie_name,
    csrf_ok,
    safe_return_to,
    session_cookie,
    set_cookie,
)
from entrypoints.http.problems import problem_response
from entrypoints.http.requests import client_address, read_json, user_agent
from entrypoints.http.routing import RouteSpec
from entrypoints.http.views import json_response

CSRF_FAILED = Text("This page expired or did not come from this site. Reload it and try again.")


@attrs.frozen
class HostedAssertion:
    """Body of POST /ui/login/passkey and /ui/login/mfa/passkey: ``{"csrf_token",
    "return_to", "ceremony_id", "credential": AuthenticationResponseJSON}`` (a missing
    ``csrf_token`` is a CSRF failure, 403, not a malformed body)."""

    ceremony_id: str
    credential: dict[str, Any] = attrs.field(repr=False)
    csrf_token: str = attrs.field(default="", repr=False)
    return_to: str = ""


@attrs.frozen
class HostedOptionsRequest:
    """Body of POST /ui/login/mfa/passkey/options: ``{"csrf_token"}``."""

    csrf_token: str = attrs.field(default="", repr=False)


def _csrf_refused(request: web.Request) -> web.Response:
    return _problem(request, 403, "forbidden", CSRF_FAILED)


def _problem(request: web.Request, status: int, code: str, detail: Text) -> web.Response:
    """The problem the page's script shows: ``detail`` in the page's language (the script's
    request carries the browser's ``Accept-Language``)."""
    gettext = translations(page_locale(request)).gettext
    return problem_response(status, code, detail.translated(gettext), headers=PAGE_HEADERS)


def _signed_in(request: web.Request, return_to: str, cookie: str) -> web.Response:
    """200 ``{"redirect": return_to}`` setting the hosted session's cookie (and ending the
    second step's ``mfa`` cookie), as ``routes.signed_in`` does with a 303."""
    response = json_response({"redirect": return_to}, headers=PAGE_HEADERS)
    set_cookie(response, request, "session", cookie)
    clear_cookie(response, request, "mfa")
    return response


def _raise_fault(error: DomainError) -> None:
    """Re-raise a storage fault (503 by the problem middleware): it is no refusal."""
    if isinstance(error, StorageFault):
        raise error


async def login_passkey(request: web.Request) -> web.Response:
    """POST /ui/login/passkey ``{"csrf_token", "return_to", "ceremony_id", "credential"}`` →
    200 ``{"redirect"}`` with the hosted-session cookie; 401 ``invalid_passkey`` (the login
    page's one message) on any refusal; 403 on a CSRF failure."""
    body = await read_json(request, HostedAssertion)
    if not csrf_ok(request, {"csrf_token": body.csrf_token}):
        return _csrf_refused(request)
    container = request.app[CONTAINER]
    return_to = safe_return_to(body.return_to) or "/ui/signed-in"
    address = client_address(request, container.config().server.trusted_proxies)
    try:
        cookie = await container.hosted_login().passkey(
            body.ceremony_id, body.credential, address, user_agent(request), client_of(return_to),
            previous=session_cookie(request),
        )  # fmt: skip
    except DomainError as e:
        _raise_fault(e)
        return _problem(request, 401, "invalid_passkey", LOGIN_FAILED)
    return _signed_in(request, return_to, cookie)


def _mfa_token(request: web.Request) -> str:
    return request.cookies.get(cookie_name(request, "mfa"), "")


async def mfa_passkey_options(request: web.Request) -> web.Response:
    """POST /ui/login/mfa/passkey/options ``{"csrf_token"}`` (the ``mfa_token`` in its cookie)
    → 200 ``{"ceremony_id", "options"}`` bound to that token; 401 ``invalid_mfa_code`` for a
    missing, unknown or expired token; 403 on a CSRF failure."""
    body = await read_json(request, HostedOptionsRequest)
    if not csrf_ok(request, {"csrf_token": body.csrf_token}):
        return _csrf_refused(request)
    token = _mfa_token(request)
    if not token:  # no second step under way: as an unknown token
        return _problem(request, 401, "invalid_mfa_code", CODE_FAILED)
    try:
        started = await request.app[CONTAINER].passkey_login().start(mfa_token=token)
    except DomainError as e:
        _raise_fault(e)
        return _problem(request, 401, "invalid_mfa_code", CODE_FAILED)
    return json_response({"ceremony_id": started.ceremony_id, "options": started.options},
                         headers=PAGE_HEADERS)  # fmt: skip


async def mfa_passkey(request: web.Request) -> web.Response:
    """POST /ui/login/mfa/passkey ``{"csrf_token", "return_to", "ceremony_id", "credential"}``
    (the ``mfa_token`` in its cookie) → 200 ``{"redirect"}`` signed in; 401
    ``invalid_mfa_code`` (the second step's one message) on any refusal; 403 on a CSRF
    failure."""
    body = await read_json(request, HostedAssertion)
    if not csrf_ok(request, {"csrf_token": body.csrf_token}):
        return _csrf_refused(request)
    container = request.app[CONTAINER]
    return_to = safe_return_to(body.return_to) or "/ui/signed-in"
    address = client_address(request, container.config().server.trusted_proxies)
    try:
        cookie = await container.hosted_login().passkey_mfa(
            _mfa_token(request), body.ceremony_id, body.credential, address,
            user_agent(request), client_of(return_to), previous=session_cookie(request),
        )  # fmt: skip
    except DomainError as e:
        _raise_fault(e)
        return _problem(request, 401, "invalid_mfa_code", CODE_FAILED)
    return _signed_in(request, return_to, cookie)


_P = "Problem"
_CSRF = {"type": "string", "description": "the page's csrf_token (double-submit)"}
_ASSERTION_BODY = {
    "type": "object",
    "required": ["ceremony_id", "credential"],
    "properties": {
        "csrf_token": _CSRF,
        "return_to": {"type": "string", "description": "a path of this service"},
        "ceremony_id": {"type": "string"},
        "credential": {"type": "object", "description": "AuthenticationResponseJSON (WebAuthn L3)"},
    },
}
_SIGNED_IN = 'Signed in: {"redirect": return_to}, the hosted-session cookie set'

ROUTES = [
    RouteSpec("POST", "/ui/login/passkey", login_passkey,
              "Sign in with a passkey on the hosted login page (its script's call)",
              {200: _SIGNED_IN, 400: _P, 401: _P, 403: _P, 413: _P, 422: _P},
              request=_ASSERTION_BODY, tag="ui"),
    RouteSpec("POST", "/ui/login/mfa/passkey/options", mfa_passkey_options,
              "Start a passkey second step on the hosted page: a ceremony bound to its mfa_token",
              {200: "PasskeyCeremony", 400: _P, 401: _P, 403: _P, 413: _P, 422: _P},
              request={"type": "object", "properties": {"csrf_token": _CSRF}}, tag="ui"),
    RouteSpec("POST", "/ui/login/mfa/passkey", mfa_passkey,
              "Finish the hosted second step with a passkey (its script's call)",
              {200: _SIGNED_IN, 400: _P, 401: _P, 403: _P, 413: _P, 422: _P},
              request=_ASSERTION_BODY, tag="ui"),
]  # fmt: skip
"""The hosted pages' passkey endpoints (docs/reference/oauth-and-oidc.md; ADR 0033)."""
