"""Routes of passkey registration and management (docs/reference/mfa-and-passkeys.md).

The caller's routes authenticate it (401 ``invalid_token``) and act on its own passkeys; the
admin routes (``/users/{id}/passkeys``) ask ``domain.policy`` through the use case (403 below
org_admin, 404 outside the organization). A ``Passkey`` never shows its public key or counter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
from aiohttp import web

from application.shared.checks import MAX_NAME_LENGTH, NAME_PATTERN, check_name
from domain.passkeys import Passkey
from entrypoints.config.converters import UncheckedText
from entrypoints.http.auth_routes import pair_json
from entrypoints.http.caller import authenticated, principal
from entrypoints.http.keys import CONTAINER
from entrypoints.http.reauth_body import (
    PROOF_ALTERNATIVES,
    PROOF_DESCRIPTION,
    PROOF_PROPERTIES,
    proof_of,
    read_optional_json,
)
from entrypoints.http.requests import client_address, read_json, user_agent
from entrypoints.http.routing import EMAIL_SCHEMA, RouteSpec, id_parameter, path_id
from entrypoints.http.session_routes import PasswordConfirmation
from entrypoints.http.views import iso, json_response

if TYPE_CHECKING:
    from entrypoints.container import Container


@attrs.frozen
class RegistrationRequest:
    """Body of POST /me/passkeys/registration/options: ``{"name"?}`` (the name is given
    again, or first, when the passkey is stored) and the fresh proof of
    docs/reference/mfa-and-passkeys.md: ``"password"``, or ``"ceremony_id"`` + ``"credential"`` (a
    passkey assertion), or ``"provider"`` + ``"id_token"`` + ``"nonce"`` (a linked provider's fresh
    ID token)."""

    name: str | None = None
    password: UncheckedText | None = attrs.field(default=None, repr=False)
    ceremony_id: str | None = None
    credential: dict[str, Any] | None = attrs.field(default=None, repr=False)
    provider: UncheckedText | None = None
    id_token: UncheckedText | None = attrs.field(default=None, repr=False)
    nonce: UncheckedText | None = attrs.field(default=None, repr=False)


@attrs.frozen
class NewPasskey:
    """Body of POST /me/passkeys: ``{"ceremony_id", "credential": RegistrationResponseJSON,
    "name"?}``."""

    ceremony_id: str
    credential: dict[str, Any]
    name: str | None = None


@attrs.frozen
class PasskeyLoginStart:
    """Body of POST /login/passkey/options: ``{}`` (discoverable), ``{"email"}`` or
    ``{"mfa_token"}`` (a passkey answering ``mfa_required``)."""

    email: str | None = None
    mfa_token: str | None = attrs.field(default=None, repr=False)


@attrs.frozen
class PasskeyAssertion:
    """Body of POST /login/passkey: ``{"ceremony_id", "credential":
    AuthenticationResponseJSON}``."""

    ceremony_id: str
    credential: dict[str, Any]


@attrs.frozen
class PasskeyRename:
    """Body of PATCH /me/passkeys/{id}: ``{"name"}``."""

    name: str


def passkey_json(passkey: Passkey) -> dict[str, Any]:
    """Contract ``Passkey``: id, name, created_at, last_used_at, aaguid, backed_up, transports,
    suspected_clone. Never the public key or the counter."""
    used = passkey.last_used_at
    return {
        "id": passkey.id,
        "name": passkey.name,
        "created_at": iso(passkey.created_at),
        "last_used_at": None if used is None else iso(used),
        "aaguid": passkey.aaguid,
        "backed_up": passkey.backed_up,
        "transports": list(passkey.transports),
        "suspected_clone": passkey.suspected_clone,
    }


def _container(request: web.Request) -> Container:
    return request.app[CONTAINER]


def _items(passkeys: list[Passkey]) -> web.Response:
    return json_response({"items": [passkey_json(p) for p in passkeys]})


async def registration_options(request: web.Request) -> web.Response:
    """POST /me/passkeys/registration/options → 200 ``{"ceremony_id", "options"}``; 401
    ``reauthentication_required`` without a valid fresh proof, 429 past the login throttle."""
    caller = await authenticated(request)
    body = await read_optional_json(request, RegistrationRequest)
    if body.name is not None:  # checked now too: the answer must not be refused for it later
        check_name(body.name)
    container = _container(request)
    client = client_address(request, container.config().server.trusted_proxies)
    started = await container.passkey_registration().start(caller.user.id, proof_of(body), client)
    return json_response({"ceremony_id": started.ceremony_id, "options": started.options},
                         headers={"Cache-Control": "no-store"})  # fmt: skip


async def register_passkey(request: web.Request) -> web.Response:
    """POST /me/passkeys → 201 ``Passkey``; 400 ``invalid_ceremony`` / ``invalid_passkey``,
    409 ``passkey_exists``."""
    caller = await authenticated(request)
    body = await read_json(request, NewPasskey)
    passkey = (
        await _container(request)
        .passkey_registration()
        .finish(caller.user.id, body.ceremony_id, body.credential, body.name)
    )
    return json_response(passkey_json(passkey), status=201)


async def list_own_passkeys(request: web.Request) -> web.Response:
    """GET /me/passkeys → 200 ``{"items": [Passkey]}``, newest first."""
    caller = await authenticated(request)
    return _items(await _container(request).own_passkeys().list(caller.user.id))


async def rename_passkey(request: web.Request) -> web.Response:
    """PATCH /me/passkeys/{id} ``{"name"}`` → 200 ``Passkey``; 404 for another's."""
    caller = await authenticated(request)
    body = await read_json(request, PasskeyRename)
    passkey = (
        await _container(request)
        .own_passkeys()
        .rename(caller.user.id, path_id(request, "id"), body.name)
    )
    return json_response(passkey_json(passkey))


async def delete_own_passkey(request: web.Request) -> web.Response:
    """DELETE /me/passkeys/{id} ``{"password"}`` → 204; 403 ``invalid_old_password`` (429 past
    the login throttle), 404."""
    caller = await authenticated(request)
    body = await read_json(request, PasswordConfirmation)
    container = _container(request)
    client = client_address(request, container.config().server.trusted_proxies)
    await container.own_passkeys().delete(
        caller.user.id, path_id(request, "id"), body.password, client
    )
    return web.Response(status=204)


async def list_user_passkeys(request: web.Request) -> web.Response:
    """GET /users/{id}/passkeys → 200 ``{"items": [Passkey]}``; 403 below org_admin, 404."""
    caller = await principal(request)
    return _items(await _container(request).passkey_admin().list(caller, path_id(request, "id")))


async def delete_user_passkey(request: web.Request) -> web.Response:
    """DELETE /users/{id}/passkeys/{pid} → 204 (a lost device); 403 below org_admin, 404."""
    caller = await principal(request)
    await (
        _container(request)
        .passkey_admin()
        .delete(caller, path_id(request, "id"), path_id(request, "pid"))
    )
    return web.Response(status=204)


async def login_options(request: web.Request) -> web.Response:
    """POST /login/passkey/options ``{}`` or ``{"email"}`` → 200 ``{"ceremony_id",
    "options"}``; 403 with ``webauthn.passwordless`` off."""
    body = await read_json(request, PasskeyLoginStart)
    started = await _container(request).passkey_login().start(body.email, body.mfa_token)
    return json_response({"ceremony_id": started.ceremony_id, "options": started.options},
                         headers={"Cache-Control": "no-store"})  # fmt: skip


async def login_passkey(request: web.Request) -> web.Response:
    """POST /login/passkey → 200 ``TokenPair``; 400 ``invalid_ceremony``, 401
    ``invalid_passkey``, 403 ``account_disabled``, 429 when throttled."""
    body = await read_json(request, PasskeyAssertion)
    container = _container(request)
    client = client_address(request, container.config().server.trusted_proxies)
    pair = await container.passkey_login().finish(
        body.ceremony_id, body.credential, client, user_agent(request)
    )
    return pair_json(pair)


_NAME = {"type": "string", "minLength": 1, "maxLength": MAX_NAME_LENGTH, "pattern": NAME_PATTERN}
_OPTIONS_BODY = {"type": "object", "properties": {"name": _NAME, **PROOF_PROPERTIES},
                 "oneOf": PROOF_ALTERNATIVES, "description": PROOF_DESCRIPTION}  # fmt: skip
_NEW_BODY = {
    "type": "object",
    "required": ["ceremony_id", "credential"],
    "properties": {"ceremony_id": {"type": "string"},
                   "credential": {"type": "object",
                                  "description": "RegistrationResponseJSON (WebAuthn L3)"},
                   "name": _NAME},
}  # fmt: skip
_RENAME_BODY = {"type": "object", "required": ["name"], "properties": {"name": _NAME}}
_PASSWORD_BODY = {"type": "object", "required": ["password"],
                  "properties": {"password": {"type": "string"}}}  # fmt: skip
_P = "Problem"
_ID, _USER, _PID = (
    id_parameter("id", "passkey id"),
    id_parameter("id", "user id"),
    id_parameter("pid", "passkey id"),
)

ROUTES = [
    RouteSpec("POST", "/me/passkeys/registration/options", registration_options,
              "Start registering a passkey: a ceremony and its creation options",
              {200: "PasskeyCeremony", 400: _P, 401: _P, 413: _P, 422: _P, 429: _P},
              request=_OPTIONS_BODY, bearer=True, tag="passkeys"),
    RouteSpec("POST", "/me/passkeys", register_passkey, "Register a passkey (the answer)",
              {201: "Passkey", 400: _P, 401: _P, 409: _P, 413: _P, 422: _P},
              request=_NEW_BODY, bearer=True, tag="passkeys"),
    RouteSpec("GET", "/me/passkeys", list_own_passkeys, "The caller's passkeys, newest first",
              {200: "PasskeyList", 401: _P}, bearer=True, tag="passkeys"),
    RouteSpec("PATCH", "/me/passkeys/{id}", rename_passkey, "Rename one of the caller's passkeys",
              {200: "Passkey", 400: _P, 401: _P, 404: _P, 413: _P, 422: _P},
              request=_RENAME_BODY, bearer=True, parameters=(_ID,), tag="passkeys"),
    RouteSpec("DELETE", "/me/passkeys/{id}", delete_own_passkey,
              "Delete one of the caller's passkeys (needs its password)",
              {204: "No Content", 400: _P, 401: _P, 403: _P, 404: _P, 413: _P, 422: _P,
               429: _P},
              request=_PASSWORD_BODY, bearer=True, parameters=(_ID,), tag="passkeys"),
    RouteSpec("POST", "/login/passkey/options", login_options,
              "Start a passkey login: a ceremony and its request options",
              {200: "PasskeyCeremony", 400: _P, 401: _P, 403: _P, 413: _P, 422: _P},
              request={"type": "object", "properties": {"email": EMAIL_SCHEMA,
                                                        "mfa_token": {"type": "string"}},
                       "not": {"required": ["email", "mfa_token"]}},
              tag="passkeys"),
    RouteSpec("POST", "/login/passkey", login_passkey, "Log in with a passkey (the answer)",
              {200: "TokenPair", 400: _P, 401: _P, 403: _P, 413: _P, 422: _P, 429: _P},
              request={"type": "object", "required": ["ceremony_id", "credential"],
                       "properties": {"ceremony_id": {"type": "string"},
                                      "credential": {"type": "object"}}},
              tag="passkeys"),
    RouteSpec("GET", "/users/{id}/passkeys", list_user_passkeys,
              "A user's passkeys (org_admin: own organization)",
              {200: "PasskeyList", 401: _P, 403: _P, 404: _P},
              bearer=True, parameters=(_USER,), tag="passkeys"),
    RouteSpec("DELETE", "/users/{id}/passkeys/{pid}", delete_user_passkey,
              "Delete a user's passkey, for a lost device (org_admin: own organization)",
              {204: "No Content", 401: _P, 403: _P, 404: _P},
              bearer=True, parameters=(_USER, _PID), tag="passkeys"),
]  # fmt: skip
"""The passkey registration and management routes of docs/reference/mfa-and-passkeys.md."""
