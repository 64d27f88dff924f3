"""Passkeys on the account page (docs/reference/mfa-and-passkeys.md and
docs/reference/accounts.md): the list, rename, remove (the password), and add through WebAuthn.

Adding runs in the page's external script (``static/account-passkey.js``;
``navigator.credentials.create``), so its two steps are JSON calls, CSRF-checked like every
``/ui`` POST (``Origin`` and the double-submit ``csrf_token`` as a member of the body):
``/ui/account/passkeys/options`` starts the JSON API's registration ceremony
(``PasskeyRegistration.start``) with the hosted session's recent login as the fresh proof (a
stale one: 401 ``reauthentication_required`` with ``{"redirect"}`` to the re-authentication
page), and ``/ui/account/passkeys/add`` finishes it (``PasskeyRegistration.finish``). Renaming
and removing are ``OwnPasskeys``' (``PATCH`` / ``DELETE /me/passkeys/{id}``'s). The same script
confirms who the user is with a passkey on the re-authentication page
(``/ui/account/reauthenticate/passkey``, ``HostedAccount.reauthenticate`` with the assertion).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import attrs
from aiohttp import web

from adapters.i18n.catalogs import translations
from application.shared.reauth import FreshProof
from domain.errors import (
    DomainError,
    InvalidOldPassword,
    NotFound,
    RateLimited,
    ReauthenticationRequired,
    StorageFault,
    ValidationFailed,
)
from domain.texts import Text
from entrypoints.http.keys import CONTAINER
from entrypoints.http.language import page_locale
from entrypoints.http.pages.account_security import (
    REAUTHENTICATE,
    TOO_MANY,
    account_return_to,
    client_of_request,
    get,
    post,
    posted_form,
    refused,
    signed_in_visit,
)
from entrypoints.http.pages.web import PAGE_HEADERS, csrf_ok, page, see_other, session_cookie
from entrypoints.http.problems import problem_response, status_of
from entrypoints.http.requests import read_json
from entrypoints.http.routing import RouteSpec
from entrypoints.http.views import json_response

PASSKEYS = "/ui/account/passkeys"
EXPIRED = Text("This page expired. Reload it and try again.")
NOT_ADDED = Text("The passkey could not be added. Try again.")
_REAUTHENTICATE = REAUTHENTICATE + "?" + urlencode({"return_to": PASSKEYS})


@attrs.frozen
class OptionsRequest:
    """Body of POST /ui/account/passkeys/options: ``{"csrf_token"}``."""

    csrf_token: str = attrs.field(default="", repr=False)


@attrs.frozen
class PasskeyReauthentication:
    """Body of POST /ui/account/reauthenticate/passkey: ``{"csrf_token", "return_to",
    "ceremony_id", "credential": AuthenticationResponseJSON}``."""

    ceremony_id: str
    credential: dict[str, Any] = attrs.field(repr=False)
    csrf_token: str = attrs.field(default="", repr=False)
    return_to: str = ""


@attrs.frozen
class NewPasskeyRequest:
    """Body of POST /ui/account/passkeys/add: ``{"csrf_token", "ceremony_id", "credential":
    RegistrationResponseJSON, "name"?}``."""

    ceremony_id: str
    credential: dict[str, Any] = attrs.field(repr=False)
    csrf_token: str = attrs.field(default="", repr=False)
    name: str | None = None


async def _listing(request: web.Request, error: Text | None = None,
                   status: int = 200) -> web.Response:  # fmt: skip
    visit = await signed_in_visit(request, PASSKEYS)
    if isinstance(visit, web.Response):
        return visit
    items = await request.app[CONTAINER].own_passkeys().list(visit.user.id)
    context = {
        "passkeys": items,
        "fresh": visit.recent is not None,
        "reauthenticate": _REAUTHENTICATE,
        "error": error,
    }
    return page(request, "account_passkeys.html", context, status=status)


async def passkeys_page(request: web.Request) -> web.Response:
    """GET /ui/account/passkeys → the user's passkeys (rename, remove) and the Add button (or,
    for a stale login, a link to confirm who you are first)."""
    return await _listing(request)


def _problem(request: web.Request, status: int, code: str, detail: Text,
             **extra: Any) -> web.Response:  # fmt: skip
    """The problem the page's script shows: ``detail`` in the page's language."""
    gettext = translations(page_locale(request)).gettext
    return problem_response(status, code, detail.translated(gettext), extra=extra or None,
                            headers=PAGE_HEADERS)  # fmt: skip


async def registration_options(request: web.Request) -> web.Response:
    """POST /ui/account/passkeys/options ``{"csrf_token"}`` → 200 ``{"ceremony_id",
    "options"}``; 401 ``reauthentication_required`` with ``{"redirect"}`` for no or a stale
    login; 403 on a CSRF failure."""
    body = await read_json(request, OptionsRequest)
    if not csrf_ok(request, {"csrf_token": body.csrf_token}):
        return _problem(request, 403, "forbidden", EXPIRED)
    container = request.app[CONTAINER]
    visit = await container.hosted_account().visit(session_cookie(request))
    if visit is None or visit.recent is None:
        return _problem(request, 401, "reauthentication_required",
                        Text("Confirm who you are first."), redirect=_REAUTHENTICATE)  # fmt: skip
    started = await container.passkey_registration().start(
        visit.user.id, FreshProof(recent_login=visit.recent), client_of_request(request)
    )
    return json_response({"ceremony_id": started.ceremony_id, "options": started.options},
                         headers=PAGE_HEADERS)  # fmt: skip


async def add_passkey(request: web.Request) -> web.Response:
    """POST /ui/account/passkeys/add ``{"csrf_token", "ceremony_id", "credential", "name"?}``
    → 200 ``{"redirect": "/ui/account/passkeys"}`` (registered, ``passkey.registered``
    audited); the JSON API's refusals (400 ``invalid_ceremony`` / ``invalid_passkey``, 409
    ``passkey_exists``) as problem+json; 401 without a hosted session; 403 on a CSRF failure."""
    body = await read_json(request, NewPasskeyRequest)
    if not csrf_ok(request, {"csrf_token": body.csrf_token}):
        return _problem(request, 403, "forbidden", EXPIRED)
    container = request.app[CONTAINER]
    visit = await container.hosted_account().visit(session_cookie(request))
    if visit is None:
        return _problem(request, 401, "invalid_token", Text("Sign in again."))
    try:
        await container.passkey_registration().finish(
            visit.user.id, body.ceremony_id, body.credential, body.name or None
        )
    except StorageFault:
        raise
    except DomainError as e:
        return _problem(request, status_of(e), e.code, NOT_ADDED)
    return json_response({"redirect": PASSKEYS}, headers=PAGE_HEADERS)


async def reauthenticate_with_passkey(request: web.Request) -> web.Response:
    """POST /ui/account/reauthenticate/passkey ``{"csrf_token", "return_to", "ceremony_id",
    "credential"}`` (options from ``POST /login/passkey/options`` with the user's email) → 200
    ``{"redirect": return_to}`` with the session's login time now; 401
    ``reauthentication_required`` for a refused assertion (counted by the login throttle), 429
    past it, 403 on a CSRF failure."""
    body = await read_json(request, PasskeyReauthentication)
    if not csrf_ok(request, {"csrf_token": body.csrf_token}):
        return _problem(request, 403, "forbidden", EXPIRED)
    return_to = account_return_to(body.return_to)
    proof = FreshProof(ceremony_id=body.ceremony_id, credential=body.credential)
    try:
        done = (
            await request.app[CONTAINER]
            .hosted_account()
            .reauthenticate(session_cookie(request), proof, client_of_request(request))
        )
    except RateLimited as e:
        response = _problem(request, 429, e.code, TOO_MANY.filled(seconds=e.retry_after))
        response.headers["Retry-After"] = str(e.retry_after)
        return response
    except (ReauthenticationRequired, ValidationFailed):
        return _problem(
            request, 401, "reauthentication_required", Text("The passkey was not accepted.")
        )
    if not done:
        return _problem(request, 401, "invalid_token", Text("Sign in again."))
    return json_response({"redirect": return_to}, headers=PAGE_HEADERS)


async def rename_passkey(request: web.Request) -> web.Response:
    """POST /ui/account/passkeys/rename ``passkey_id``, ``name`` → 303 to the list; 422 the
    list again for a bad name; 404 for anyone else's passkey."""
    form = await posted_form(request)
    if isinstance(form, web.Response):
        return form
    visit = await signed_in_visit(request, PASSKEYS)
    if isinstance(visit, web.Response):
        return visit
    await (
        request.app[CONTAINER]
        .own_passkeys()
        .rename(visit.user.id, form.get("passkey_id", "")[:64], form.get("name", ""))
    )
    return see_other(request, "/ui/account/done?action=passkey-renamed")


async def remove_passkey(request: web.Request) -> web.Response:
    """POST /ui/account/passkeys/remove ``passkey_id``, ``password`` → 303 (as ``DELETE
    /me/passkeys/{id}``); 403 the list again for a wrong password (counted), 429, 404."""
    form = await posted_form(request)
    if isinstance(form, web.Response):
        return form
    visit = await signed_in_visit(request, PASSKEYS)
    if isinstance(visit, web.Response):
        return visit
    container = request.app[CONTAINER]
    try:
        await container.own_passkeys().delete(
            visit.user.id, form.get("passkey_id", "")[:64], form.get("password", ""),
            client_of_request(request),
        )  # fmt: skip
    except (InvalidOldPassword, RateLimited) as e:
        items = await container.own_passkeys().list(visit.user.id)
        context = {"passkeys": items, "fresh": visit.recent is not None,
                   "reauthenticate": _REAUTHENTICATE}  # fmt: skip
        return refused(request, "account_passkeys.html", context, e)
    except NotFound:
        return await _listing(request, Text("There is no such passkey."), 404)
    return see_other(request, "/ui/account/done?action=passkey-removed")


_P = "Problem"
_CSRF = {"type": "string", "description": "the page's csrf_token (double-submit)"}

ROUTES = [
    get(PASSKEYS, passkeys_page, "The passkeys page"),
    RouteSpec("POST", "/ui/account/passkeys/options", registration_options,
              "Start adding a passkey on the account page (its script's call)",
              {200: "PasskeyCeremony", 400: _P, 401: _P, 403: _P, 413: _P, 422: _P, 429: _P},
              request={"type": "object", "properties": {"csrf_token": _CSRF}}, tag="ui"),
    RouteSpec("POST", "/ui/account/passkeys/add", add_passkey,
              "Finish adding a passkey on the account page (its script's call)",
              {200: '{"redirect": "/ui/account/passkeys"}', 400: _P, 401: _P, 403: _P, 409: _P,
               413: _P, 422: _P},
              request={"type": "object", "required": ["ceremony_id", "credential"],
                       "properties": {"csrf_token": _CSRF, "ceremony_id": {"type": "string"},
                                      "credential": {"type": "object",
                                                     "description": "RegistrationResponseJSON"},
                                      "name": {"type": "string"}}}, tag="ui"),
    RouteSpec("POST", "/ui/account/reauthenticate/passkey", reauthenticate_with_passkey,
              "Confirm who you are with a passkey on the account pages (their script's call)",
              {200: '{"redirect": return_to}', 400: _P, 401: _P, 403: _P, 413: _P, 422: _P,
               429: _P},
              request={"type": "object", "required": ["ceremony_id", "credential"],
                       "properties": {"csrf_token": _CSRF, "return_to": {"type": "string"},
                                      "ceremony_id": {"type": "string"},
                                      "credential": {"type": "object",
                                                     "description": "AuthenticationResponseJSON"}}},
              tag="ui"),
    post("/ui/account/passkeys/rename", rename_passkey, "Rename a passkey",
         {404: "HTML page", 422: "HTML page"}),
    post("/ui/account/passkeys/remove", remove_passkey, "Remove a passkey",
         {404: "HTML page", 429: "HTML page"}),
]  # fmt: skip
"""The account page's passkey routes (docs/reference/mfa-and-passkeys.md)."""
