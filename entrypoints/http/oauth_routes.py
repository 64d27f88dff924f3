"""OAuth endpoints for machines (docs/reference/oauth-and-oidc.md): ``/oauth/token`` (client
credentials), ``/oauth/revoke`` (RFC 7009), ``/oauth/introspect`` (RFC 7662) and the RFC 8414
metadata.

Requests are ``application/x-www-form-urlencoded`` (RFC 6749 §3.2; a parameter given twice is
``invalid_request``). The client authenticates with HTTP Basic (``client_secret_basic``: id and
secret form-urlencoded, then base64) or with ``client_id`` and ``client_secret`` in the form
(``client_secret_post``), not both; at ``/oauth/token`` (code flow) and ``/oauth/revoke`` a
public client sends its ``client_id`` alone (``none``, RFC 7009 §2.1). Errors are RFC 6749
§5.2 JSON ``{"error", "error_description"}`` with ``Cache-Control: no-store`` (401
``invalid_client`` also with ``WWW-Authenticate: Basic realm="authsvc"``), not problem+json.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qsl, unquote_plus

from aiohttp import web

from application.oauth.code_client import JWT_BEARER, PRIVATE_KEY_JWT
from application.oauth.grants import OAuthError
from domain.clients import Client
from domain.device import DEVICE_CODE_GRANT
from domain.oidc import OIDC_SCOPES
from entrypoints.http.keys import CONTAINER
from entrypoints.http.requests import client_address, read_body, user_agent
from entrypoints.http.routing import RouteSpec
from entrypoints.http.views import json_response

NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
"""RFC 6749 §5.1: token responses (and their errors) must not be cached."""
FORM = "application/x-www-form-urlencoded"
_MAX_PARAMS = 32


def assertion_audiences(request: web.Request, path: str) -> tuple[str, ...]:
    """The ``aud`` values a ``private_key_jwt`` assertion may name at the endpoint ``path``
    (docs/reference/oauth-and-oidc.md): the issuer (as configured and without a trailing
    slash), the token endpoint and the endpoint itself, all under ``auth.issuer`` — never a URL
    built from the request's ``Host``."""
    configured = request.app[CONTAINER].auth_settings().current.issuer
    base = configured.rstrip("/")
    return tuple(dict.fromkeys((configured, base, base + "/oauth/token", base + path)))


def oauth_error(error: OAuthError) -> web.Response:
    """The RFC 6749 §5.2 answer to ``error``."""
    headers = dict(NO_STORE)
    if error.status == 401:
        headers["WWW-Authenticate"] = 'Basic realm="authsvc"'
    if error.nonce is not None:
        headers["DPoP-Nonce"] = error.nonce
    body = {"error": error.error, "error_description": error.description}
    return json_response(body, status=error.status, headers=headers)


async def read_form(request: web.Request) -> dict[str, str]:
    """The form parameters of the request (RFC 6749 §3.2). Raises ``OAuthError``
    (``invalid_request``) for another Content-Type, a body that is not UTF-8 form data, a
    parameter given twice or more than 32 parameters."""
    if request.content_type != FORM:
        raise OAuthError("invalid_request", f"the body must be {FORM}")
    raw = await read_body(request)
    try:
        pairs = parse_qsl(
            raw.decode("utf-8"), keep_blank_values=True, strict_parsing=bool(raw),
            errors="strict", max_num_fields=_MAX_PARAMS,
        )  # fmt: skip
    except (UnicodeDecodeError, ValueError):
        raise OAuthError("invalid_request", "the body is not form data") from None
    form: dict[str, str] = {}
    for name, value in pairs:
        if name in form:
            raise OAuthError("invalid_request", f"the parameter {name!r} is repeated")
        if "\x00" in value or "\x00" in name:
            raise OAuthError("invalid_request", "the form holds a NUL character")
        form[name] = value
    return form


def client_credentials(request: web.Request, form: dict[str, str]) -> tuple[str, str]:
    """``(client_id, client_secret)`` from HTTP Basic or the form (RFC 6749 §2.3.1). Raises
    ``OAuthError``: ``invalid_request`` when both are used, ``invalid_client`` (401) when
    neither is or the Basic header is malformed."""
    header = request.headers.get("Authorization")
    in_form = "client_id" in form or "client_secret" in form
    if header is not None:
        if in_form:
            raise OAuthError("invalid_request", "authenticate the client one way only")
        scheme, _, value = header.partition(" ")
        try:
            decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            decoded = ""
        client_id, colon, secret = decoded.partition(":")
        if scheme.lower() != "basic" or not colon:
            raise OAuthError("invalid_client", "client authentication failed", 401)
        return unquote_plus(client_id), unquote_plus(secret)
    if "client_id" not in form or "client_secret" not in form:
        raise OAuthError("invalid_client", "client authentication failed", 401)
    return form["client_id"], form["client_secret"]


def oauth_endpoint(handler: Callable[[web.Request], Awaitable[Any]]) -> Callable[..., Any]:
    """Answer the handler's JSON with ``Cache-Control: no-store`` (and ``DPoP-Nonce`` when the
    handler gives one as ``_dpop_nonce``), and ``OAuthError`` as RFC 6749 §5.2."""

    async def wrapped(request: web.Request) -> web.StreamResponse:
        try:
            body = await handler(request)
        except OAuthError as e:
            return oauth_error(e)
        if body is None:
            return web.Response(status=200, headers=NO_STORE)
        headers = dict(NO_STORE)
        nonce = body.pop("_dpop_nonce", None)
        if nonce is not None:
            headers["DPoP-Nonce"] = nonce
        return json_response(body, headers=headers)

    wrapped.__doc__ = handler.__doc__
    wrapped.__name__ = handler.__name__
    return wrapped


@oauth_endpoint
async def token(request: web.Request) -> dict[str, Any]:
    """POST /oauth/token ``grant_type=client_credentials`` [``scope``] [``resource``] (and a
    ``DPoP`` header for a bound token), the client authenticated by its secret or a
    ``private_key_jwt`` assertion (RFC 7523) → 200 ``{"access_token", "token_type",
    "expires_in", "scope"}``."""
    form = await read_form(request)
    grant = form.get("grant_type")
    if grant in CODE_FLOW_GRANTS:
        return await code_flow_token(request, form, grant)
    method = "client_secret"
    if "client_assertion" in form or "client_assertion_type" in form:
        client_id, assertion, method = code_flow_client(request, form)
        secret = assertion or ""
    else:
        client_id, secret = client_credentials(request, form)
    if not grant:
        raise OAuthError("invalid_request", "grant_type is required")
    if grant != "client_credentials":
        raise OAuthError("unsupported_grant_type", "this grant_type is not supported")
    proofs = request.headers.getall("DPoP", [])
    if len(proofs) > 1:
        raise OAuthError("invalid_dpop_proof", "one DPoP header at most")
    container = request.app[CONTAINER]
    # The proof's htu must name this endpoint under auth.issuer: never a URL built from the
    # request (its Host header is the caller's to choose). docs/reference/oauth-and-oidc.md.
    urls = (container.auth_settings().current.issuer.rstrip("/") + "/oauth/token",)
    asserted = await _by_assertion(request, client_id, secret, method, "/oauth/token")
    issued = await container.client_credentials_grant()(
        client_id, secret, form.get("scope"), form.get("resource"),
        proofs[0] if proofs else None, urls, client=asserted,
    )  # fmt: skip
    return {"access_token": issued.access_token, "token_type": issued.token_type,
            "expires_in": issued.expires_in, "scope": issued.scope,
            "_dpop_nonce": issued.dpop_nonce}  # fmt: skip


CODE_FLOW_GRANTS = ("authorization_code", "refresh_token", DEVICE_CODE_GRANT)
"""The grants of the OpenID Connect provider (docs/reference/oauth-and-oidc.md; the device code
grant of RFC 8628 ends in the same token response)."""


def code_flow_client(request: web.Request, form: dict[str, str]) -> tuple[str, str | None, str]:
    """``(client_id, secret, method)``: HTTP Basic (``client_secret_basic``), ``client_id`` +
    ``client_secret`` in the form (``client_secret_post``), ``client_assertion_type`` (RFC
    7523's ``jwt-bearer``) + ``client_assertion`` [+ ``client_id``] (``private_key_jwt``: the
    assertion stands as ``secret``, ``client_id`` may be empty), or ``client_id`` alone
    (``none``, a public client). Raises ``OAuthError`` like ``client_credentials``; two ways
    at once or another assertion type → ``invalid_request``."""
    if "client_assertion" in form or "client_assertion_type" in form:
        if "Authorization" in request.headers or "client_secret" in form:
            raise OAuthError("invalid_request", "authenticate the client one way only")
        if form.get("client_assertion_type") != JWT_BEARER or not form.get("client_assertion"):
            raise OAuthError("invalid_request", f"client_assertion_type must be {JWT_BEARER}")
        return form.get("client_id", ""), form["client_assertion"], PRIVATE_KEY_JWT
    if "Authorization" in request.headers or "client_secret" in form:
        client_id, secret = client_credentials(request, form)
        method = "client_secret_post" if "client_secret" in form else "client_secret_basic"
        return client_id, secret, method
    if "client_id" not in form:
        raise OAuthError("invalid_client", "client authentication failed", 401)
    return form["client_id"], None, "none"


async def code_flow_token(request: web.Request, form: dict[str, str], grant: str) -> dict[str, Any]:
    """POST /oauth/token for ``authorization_code`` (``code``, ``redirect_uri``,
    ``code_verifier``), ``refresh_token`` (``refresh_token`` [``scope``]) or the device code
    grant (``device_code``, RFC 8628 §3.4), with an optional
    DPoP proof → the token response with ``id_token`` (OIDC Core §3.1.3.3)."""
    container = request.app[CONTAINER]
    client_id, secret, method = code_flow_client(request, form)
    client = await container.code_client_authenticator().authenticate(
        client_id, secret, method, assertion_audiences(request, "/oauth/token")
    )
    proofs = request.headers.getall("DPoP", [])
    if len(proofs) > 1:
        raise OAuthError("invalid_dpop_proof", "one DPoP header at most")
    jkt = None
    if proofs:
        urls = (container.auth_settings().current.issuer.rstrip("/") + "/oauth/token",)
        jkt = await container.client_credentials_grant().checked_proof(client, proofs[0], urls)
    grants = container.code_flow_grants()
    if grant == "authorization_code":
        if "code" not in form:
            raise OAuthError("invalid_request", "code is required")
        address = client_address(request, container.config().server.trusted_proxies)
        issued = await grants.authorization_code(
            client, form["code"], form.get("redirect_uri"), form.get("code_verifier"), jkt,
            user_agent(request), address,
        )  # fmt: skip
    elif grant == DEVICE_CODE_GRANT:
        if "device_code" not in form:
            raise OAuthError("invalid_request", "device_code is required")
        address = client_address(request, container.config().server.trusted_proxies)
        issued = await container.device_flow().poll(
            client, form["device_code"], jkt, user_agent(request), address
        )
    else:
        if "refresh_token" not in form:
            raise OAuthError("invalid_request", "refresh_token is required")
        issued = await grants.refresh(client, form["refresh_token"], form.get("scope"), jkt)
    body: dict[str, Any] = {"access_token": issued.access_token, "token_type": issued.token_type,
                            "expires_in": issued.expires_in, "scope": issued.scope}  # fmt: skip
    if issued.id_token is not None:
        body["id_token"] = issued.id_token
    if issued.refresh_token is not None:
        body["refresh_token"] = issued.refresh_token
    return body


@oauth_endpoint
async def revoke(request: web.Request) -> None:
    """POST /oauth/revoke ``token`` [``token_type_hint``] → 200 (also for a token that is not
    the caller's, unknown or expired). The client authenticates with its secret (Basic or
    form) or, a public client, with ``client_id`` alone (RFC 7009 §2.1)."""
    form = await read_form(request)
    client_id, secret, method = code_flow_client(request, form)
    if "token" not in form:
        raise OAuthError("invalid_request", "token is required")
    client = await _by_assertion(request, client_id, secret, method, "/oauth/revoke")
    await request.app[CONTAINER].revocation()(client_id, secret, form["token"], client=client)


@oauth_endpoint
async def introspect(request: web.Request) -> dict[str, Any]:
    """POST /oauth/introspect ``token`` → 200 RFC 7662 (``{"active": false}`` for anything
    the caller may not know about)."""
    form = await read_form(request)
    if "client_assertion" in form or "client_assertion_type" in form:
        client_id, secret, method = code_flow_client(request, form)
    else:
        (client_id, secret), method = client_credentials(request, form), "client_secret"
    if "token" not in form:
        raise OAuthError("invalid_request", "token is required")
    client = await _by_assertion(request, client_id, secret, method, "/oauth/introspect")
    answer: dict[str, Any] = await request.app[CONTAINER].introspection()(
        client_id, secret or "", form["token"], client=client
    )
    return answer


async def _by_assertion(
    request: web.Request, client_id: str, assertion: str | None, method: str, path: str
) -> Client | None:
    """The client a ``private_key_jwt`` assertion authenticates (RFC 7523), or None for the
    other methods (the use case authenticates those itself)."""
    if method != PRIVATE_KEY_JWT:
        return None
    authenticator = request.app[CONTAINER].code_client_authenticator()
    client: Client = await authenticator.authenticate(
        client_id, assertion, method, assertion_audiences(request, path)
    )
    return client


def endpoint_metadata(request: web.Request) -> dict[str, Any]:
    """The members RFC 8414 metadata and the OIDC discovery document share
    (docs/reference/oauth-and-oidc.md): ``issuer`` exactly as configured (the tokens' ``iss``), the
    endpoints, the grant and client authentication methods, the signing and DPoP algorithms."""
    container = request.app[CONTAINER]
    configured = container.auth_settings().current.issuer
    issuer = configured.rstrip("/")
    algs = sorted({key["alg"] for key in container.signer().jwks()["keys"]})
    methods = ["client_secret_basic", "client_secret_post"]
    assertion_algs = container.client_assertions().algorithms
    return {
        "issuer": configured,
        "authorization_endpoint": issuer + "/oauth/authorize",
        "token_endpoint": issuer + "/oauth/token",
        "userinfo_endpoint": issuer + "/oauth/userinfo",
        "end_session_endpoint": issuer + "/oauth/logout",
        "revocation_endpoint": issuer + "/oauth/revoke",
        "introspection_endpoint": issuer + "/oauth/introspect",
        "jwks_uri": issuer + "/.well-known/jwks.json",
        "device_authorization_endpoint": issuer + "/oauth/device_authorization",
        "pushed_authorization_request_endpoint": issuer + "/oauth/par",
        "require_pushed_authorization_requests": False,
        "grant_types_supported": [
            "authorization_code",
            "refresh_token",
            "client_credentials",
            DEVICE_CODE_GRANT,
        ],
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": True,
        "scopes_supported": [*OIDC_SCOPES, "authsvc"],
        "token_endpoint_auth_methods_supported": [*methods, "none", PRIVATE_KEY_JWT],
        "token_endpoint_auth_signing_alg_values_supported": list(assertion_algs),
        "revocation_endpoint_auth_methods_supported": [*methods, "none", PRIVATE_KEY_JWT],
        "introspection_endpoint_auth_methods_supported": [*methods, PRIVATE_KEY_JWT],
        "access_token_signing_alg_values_supported": algs,
        "dpop_signing_alg_values_supported": list(container.dpop_verifier().algorithms),
    }


async def metadata(request: web.Request) -> web.Response:
    """GET /.well-known/oauth-authorization-server → RFC 8414 metadata."""
    return json_response(
        endpoint_metadata(request), headers={"Cache-Control": "public, max-age=60"}
    )


OAUTH_ERROR = "OAuth error (RFC 6749 §5.2)"
"""The OpenAPI description of an RFC 6749 §5.2 error answer."""
_E = OAUTH_ERROR
CLIENT_AUTH_FORM = {"client_id": {"type": "string"}, "client_secret": {"type": "string"}}
"""The form members of client authentication (OpenAPI)."""
_TOKEN_FORM = {
    "type": "object",
    "required": ["grant_type"],
    "properties": {"grant_type": {"enum": ["client_credentials", *CODE_FLOW_GRANTS]},
                   "scope": {"type": "string"}, "resource": {"type": "string"},
                   "code": {"type": "string"}, "redirect_uri": {"type": "string"},
                   "code_verifier": {"type": "string"}, "refresh_token": {"type": "string"},
                   "device_code": {"type": "string"}, **CLIENT_AUTH_FORM},
}  # fmt: skip
_TOKEN_ONLY = {
    "type": "object",
    "required": ["token"],
    "properties": {"token": {"type": "string"}, "token_type_hint": {"type": "string"},
                   **CLIENT_AUTH_FORM},
}  # fmt: skip

ROUTES = [
    RouteSpec("POST", "/oauth/token", token,
              "Client credentials grant: an RFC 9068 access token for a client",
              {200: "OAuth token response (RFC 6749 §5.1)", 400: _E, 401: _E, 413: "Problem"},
              request=_TOKEN_FORM, media_type=FORM, tag="oauth-protocol"),
    RouteSpec("POST", "/oauth/revoke", revoke,
              "Revoke a client's access token or refresh token (RFC 7009)",
              {200: "Revoked (or nothing to revoke)", 400: _E, 401: _E, 413: "Problem"},
              request=_TOKEN_ONLY, media_type=FORM, tag="oauth-protocol"),
    RouteSpec("POST", "/oauth/introspect", introspect,
              "Introspect a client access token (RFC 7662)",
              {200: "Introspection response", 400: _E, 401: _E, 413: "Problem"},
              request=_TOKEN_ONLY, media_type=FORM, tag="oauth-protocol"),
    RouteSpec("GET", "/.well-known/oauth-authorization-server", metadata,
              "Authorization server metadata (RFC 8414)", {200: "Metadata"}, tag="discovery"),
]  # fmt: skip
"""The OAuth protocol routes of docs/reference/oauth-and-oidc.md."""
