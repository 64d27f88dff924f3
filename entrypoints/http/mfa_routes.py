"""Routes of docs/reference/mfa-and-passkeys.md: TOTP enrolment, the login's second step, turning
MFA off.

Each hands over to ``application.mfa.totp`` / ``application.login.mfa_step``; who may reset another
user's MFA is decided by ``domain.policy`` in the use case. Secrets, codes and ``mfa_token``s
travel only in bodies, never in a log line or span attribute.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
from aiohttp import web

from domain.errors import FieldError, ValidationFailed
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
from entrypoints.http.routing import RouteSpec, id_parameter, path_id
from entrypoints.http.session_routes import PasswordConfirmation
from entrypoints.http.views import json_response

if TYPE_CHECKING:
    from entrypoints.container import Container


@attrs.frozen
class TotpCode:
    """Body of /me/mfa/totp/confirm: ``{"code"}``, six digits from the authenticator."""

    code: UncheckedText = attrs.field(repr=False)


@attrs.frozen
class TotpStart:
    """Body of POST /me/mfa/totp: the fresh proof of docs/reference/mfa-and-passkeys.md —
    ``{"password"}`` or ``{"ceremony_id", "credential"}`` or ``{"provider", "id_token",
    "nonce"}``."""

    password: UncheckedText | None = attrs.field(default=None, repr=False)
    ceremony_id: str | None = None
    credential: dict[str, Any] | None = attrs.field(default=None, repr=False)
    provider: UncheckedText | None = None
    id_token: UncheckedText | None = attrs.field(default=None, repr=False)
    nonce: UncheckedText | None = attrs.field(default=None, repr=False)


@attrs.frozen
class MfaLoginRequest:
    """Body of /login/mfa: ``{"mfa_token", "code"}`` (a TOTP or a recovery code) or
    ``{"mfa_token", "ceremony_id", "credential"}`` (a passkey, docs/reference/mfa-and-passkeys.md).
    Any string is taken as a token or code: one no token or code can be is just wrong (401); giving
    neither or both answers is a 422."""

    mfa_token: UncheckedText = attrs.field(repr=False)
    code: UncheckedText | None = attrs.field(default=None, repr=False)
    ceremony_id: str | None = None
    credential: dict[str, Any] | None = None


def _container(request: web.Request) -> Container:
    return request.app[CONTAINER]


async def start_totp(request: web.Request) -> web.Response:
    """POST /me/mfa/totp ``{"password"}`` or ``{"ceremony_id", "credential"}`` → 200
    ``{"secret", "otpauth_uri", "qr_svg"}`` (a pending enrolment); 401
    ``reauthentication_required`` without a valid proof, 409 when MFA is already on, 429."""
    caller = await authenticated(request)
    body = await read_optional_json(request, TotpStart)
    container = _container(request)
    client = client_address(request, container.config().server.trusted_proxies)
    enrolment = await container.mfa_enrolment().start(caller.user.id, proof_of(body), client)
    return json_response(
        {
            "secret": enrolment.secret,
            "otpauth_uri": enrolment.otpauth_uri,
            "qr_svg": enrolment.qr_svg,
        },
        headers={"Cache-Control": "no-store"},
    )


async def confirm_totp(request: web.Request) -> web.Response:
    """POST /me/mfa/totp/confirm → 200 ``{"recovery_codes": [10]}``; 409 without a pending
    enrolment, 422 for a code that does not match."""
    caller = await authenticated(request)
    body = await read_json(request, TotpCode)
    codes = await _container(request).mfa_enrolment().confirm(caller.user.id, body.code)
    return json_response({"recovery_codes": codes}, headers={"Cache-Control": "no-store"})


async def disable_mfa(request: web.Request) -> web.Response:
    """DELETE /me/mfa ``{"password"}`` → 204; 403 ``invalid_old_password`` (429 past the login
    throttle)."""
    caller = await authenticated(request)
    body = await read_json(request, PasswordConfirmation)
    container = _container(request)
    client = client_address(request, container.config().server.trusted_proxies)
    await container.mfa_enrolment().disable(caller.user.id, body.password, client)
    return web.Response(status=204)


async def reset_user_mfa(request: web.Request) -> web.Response:
    """DELETE /users/{id}/mfa → 204; 403 below org_admin, for an org_admin on a superadmin or
    itself; 404 for a user missing or outside an org_admin's organization."""
    caller = await principal(request)
    await _container(request).reset_user_mfa()(caller, path_id(request, "id"))
    return web.Response(status=204)


async def login_mfa(request: web.Request) -> web.Response:
    """POST /login/mfa → 200 TokenPair; 401 ``invalid_mfa_code``; 429 when throttled."""
    body = await read_json(request, MfaLoginRequest)
    container = _container(request)
    client = client_address(request, container.config().server.trusted_proxies)
    by_passkey = body.ceremony_id is not None and body.credential is not None
    if (body.code is not None) == by_passkey:  # neither, or both
        raise ValidationFailed(
            [FieldError("code", "give a code, or a ceremony_id and a credential")]
        )
    if body.code is not None:
        pair = await container.mfa_login().complete(
            body.mfa_token, body.code, client, user_agent(request)
        )
    else:
        assert body.ceremony_id is not None and body.credential is not None
        pair = await container.passkey_login().answer_mfa(
            body.mfa_token, body.ceremony_id, body.credential, client, user_agent(request)
        )
    return pair_json(pair)


_P = "Problem"
_USER_ID = id_parameter("id", "user id")
_CODE = {"type": "string", "description": "a TOTP code (six digits) or a recovery code"}
_CONFIRM: dict[str, Any] = {"type": "object", "required": ["code"], "properties": {"code": _CODE}}
_LOGIN_MFA: dict[str, Any] = {
    "type": "object",
    "required": ["mfa_token"],
    "properties": {"mfa_token": {"type": "string"}, "code": _CODE,
                   "ceremony_id": {"type": "string"},
                   "credential": {"type": "object",
                                  "description": "AuthenticationResponseJSON (instead of code)"}},
    "oneOf": [{"required": ["code"]}, {"required": ["ceremony_id", "credential"]}],
}  # fmt: skip
_START: dict[str, Any] = {"type": "object", "properties": PROOF_PROPERTIES,
                          "oneOf": PROOF_ALTERNATIVES,
                          "description": PROOF_DESCRIPTION}  # fmt: skip
_PASSWORD_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["password"],
    "properties": {"password": {"type": "string"}},
}

ROUTES = [
    RouteSpec("POST", "/me/mfa/totp", start_totp,
              "Start a TOTP enrolment: the secret, its otpauth URI and QR code",
              {200: "TotpEnrolment", 400: _P, 401: _P, 409: _P, 413: _P, 422: _P, 429: _P},
              request=_START, bearer=True, tag="mfa"),
    RouteSpec("POST", "/me/mfa/totp/confirm", confirm_totp,
              "Switch MFA on with a code; returns ten recovery codes, shown once",
              {200: "RecoveryCodes", 400: _P, 401: _P, 409: _P, 413: _P, 422: _P},
              request=_CONFIRM, bearer=True, tag="mfa"),
    RouteSpec("DELETE", "/me/mfa", disable_mfa, "Turn the caller's MFA off (needs its password)",
              {204: "No Content", 400: _P, 401: _P, 403: _P, 413: _P, 422: _P, 429: _P},
              request=_PASSWORD_BODY, bearer=True, tag="mfa"),
    RouteSpec("DELETE", "/users/{id}/mfa", reset_user_mfa,
              "Turn a user's MFA off, for a lost device (org_admin: own organization)",
              {204: "No Content", 401: _P, 403: _P, 404: _P},
              bearer=True, parameters=(_USER_ID,), tag="mfa"),
    RouteSpec("POST", "/login/mfa", login_mfa,
              "The login's second step: an mfa_token and a TOTP or recovery code",
              {200: "TokenPair", 400: _P, 401: _P, 403: _P, 413: _P, 422: _P, 429: _P},
              request=_LOGIN_MFA, tag="mfa"),
]  # fmt: skip
"""The routes of docs/reference/mfa-and-passkeys.md, registered by ``create_app``."""
