"""Routes of the OAuth client registry (docs/reference/oauth-and-oidc.md): ``/oauth/clients``.

Every route authenticates the caller (401 ``invalid_token``) as the ``Principal`` of its user
record, parses the body (400 ``malformed_body`` / 422 ``validation_error``) and hands over to a
use case of ``application.oauth.clients``, which asks ``domain.policy`` (403 ``forbidden`` below
org_admin, then 404 ``not_found`` outside the caller's organization). Answers are problem+json
like every admin route; a client's secret appears once, in the answer that made it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, NewType

import attrs
from aiohttp import web

from application.oauth.client_fields import CLEAR, CLEARABLE_FIELDS, MAX_REDIRECT_URIS
from application.shared.checks import (
    MAX_NAME_LENGTH,
    MAX_ORG_ID_LENGTH,
    NAME_PATTERN,
    ORG_ID_PATTERN,
)
from application.shared.pagination import Page
from application.shared.settings import ALGORITHMS
from domain.clients import (
    GRANT_TYPES,
    MAX_AUDIENCE_LENGTH,
    MAX_AUDIENCES,
    MAX_SCOPES,
    SCOPE_TOKEN,
    TOKEN_ENDPOINT_AUTH_METHODS,
    Client,
)
from domain.oidc import MAX_REDIRECT_URI_LENGTH
from entrypoints.http.admin_routes import PAGING, page_query
from entrypoints.http.caller import principal
from entrypoints.http.keys import CONTAINER
from entrypoints.http.requests import read_json, read_json_nulls, request_converter
from entrypoints.http.routing import RouteSpec, id_parameter, path_id
from entrypoints.http.views import iso, json_response

if TYPE_CHECKING:
    from entrypoints.container import Container


Audiences = NewType("Audiences", tuple[str, ...])
"""The ``audience`` member of a client body: a JSON string (one audience, never split into
characters) or a list of strings (docs/reference/oauth-and-oidc.md)."""


def _audiences(value: Any, _: type) -> Audiences:
    """Structure ``audience``: a string → a one-element tuple, a list of strings → a tuple;
    anything else → ``TypeError`` (422 naming the field and the JSON types expected)."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise TypeError("expected a string or a list of strings")
    if any("\x00" in item for item in items):
        raise ValueError("must not contain the character U+0000")
    return Audiences(tuple(items))


request_converter.register_structure_hook(Audiences, _audiences)


@attrs.frozen
class ClientRegistration:
    """Body of POST /oauth/clients: ``{"name", "scopes": [str], "audience"?: str or [str],
    "org_id"?, "require_dpop"?: bool, "access_token_signed_response_alg"?: str}`` and the
    code-flow fields of docs/reference/oauth-and-oidc.md (``public`` only here: fixed at
    registration)."""

    name: str
    scopes: list[str]
    audience: Audiences | None = None
    org_id: str | None = None
    require_dpop: bool = False
    access_token_signed_response_alg: str | None = None
    grant_types: list[str] | None = None
    redirect_uris: list[str] | None = None
    post_logout_redirect_uris: list[str] | None = None
    public: bool = False
    token_endpoint_auth_method: str | None = None
    skip_consent: bool | None = None
    all_organizations: bool | None = None
    logo_uri: str | None = None
    policy_uri: str | None = None
    tos_uri: str | None = None
    id_token_signed_response_alg: str | None = None
    require_pushed_authorization_requests: bool | None = None
    jwks: dict[str, Any] | None = None
    jwks_uri: str | None = None
    backchannel_logout_uri: str | None = None
    backchannel_logout_session_required: bool | None = None


_CODE_FLOW_PATCH = (
    "grant_types", "redirect_uris", "post_logout_redirect_uris", "token_endpoint_auth_method",
    "skip_consent", "all_organizations", "logo_uri", "policy_uri", "tos_uri",
    "id_token_signed_response_alg",
    "require_pushed_authorization_requests", "jwks", "jwks_uri",
    "id_token_signed_response_alg", "backchannel_logout_uri",
    "backchannel_logout_session_required",
)  # fmt: skip


@attrs.frozen
class ClientPatch:
    """Body of PATCH /oauth/clients/{client_id}: at least one of ``{"name", "scopes",
    "audience", "require_dpop", "disabled", "access_token_signed_response_alg"}`` or of the
    code-flow fields of docs/reference/oauth-and-oidc.md but ``public``; ``jwks`` and
    ``jwks_uri`` may be sent as ``null`` (read apart by ``read_json_nulls``: cleared)."""

    name: str | None = None
    scopes: list[str] | None = None
    audience: Audiences | None = None
    require_dpop: bool | None = None
    disabled: bool | None = None
    access_token_signed_response_alg: str | None = None
    grant_types: list[str] | None = None
    redirect_uris: list[str] | None = None
    post_logout_redirect_uris: list[str] | None = None
    token_endpoint_auth_method: str | None = None
    skip_consent: bool | None = None
    all_organizations: bool | None = None
    logo_uri: str | None = None
    policy_uri: str | None = None
    tos_uri: str | None = None
    id_token_signed_response_alg: str | None = None
    require_pushed_authorization_requests: bool | None = None
    jwks: dict[str, Any] | None = None
    jwks_uri: str | None = None
    backchannel_logout_uri: str | None = None
    backchannel_logout_session_required: bool | None = None


def client_json(client: Client) -> dict[str, Any]:
    """Contract ``Client`` (section 14): client_id, name, org_id, scopes, audience,
    require_dpop, disabled, created_at, secret_rotated_at, and
    access_token_signed_response_alg when set (section 17); the code-flow fields (section 15:
    ``id_token_signed_response_alg`` when set, the others always). Never the secret or its
    hash."""
    rotated = client.secret_rotated_at
    answer: dict[str, Any] = {
        "client_id": client.id,
        "name": client.name,
        "org_id": client.org_id,
        "scopes": list(client.scopes),
        "audience": list(client.audience),
        "require_dpop": client.require_dpop,
        "disabled": client.disabled,
        "created_at": iso(client.created_at),
        "secret_rotated_at": None if rotated is None else iso(rotated),
    }
    if client.access_token_signed_response_alg is not None:
        answer["access_token_signed_response_alg"] = client.access_token_signed_response_alg
    answer.update(
        grant_types=list(client.grant_types),
        redirect_uris=list(client.redirect_uris),
        post_logout_redirect_uris=list(client.post_logout_redirect_uris),
        public=client.public,
        token_endpoint_auth_method=client.token_endpoint_auth_method,
        skip_consent=client.skip_consent,
        all_organizations=client.all_organizations,
        logo_uri=client.logo_uri,
        policy_uri=client.policy_uri,
        tos_uri=client.tos_uri,
        backchannel_logout_uri=client.backchannel_logout_uri,
        backchannel_logout_session_required=client.backchannel_logout_session_required,
    )
    if client.id_token_signed_response_alg is not None:
        answer["id_token_signed_response_alg"] = client.id_token_signed_response_alg
    answer["require_pushed_authorization_requests"] = client.require_pushed_authorization_requests
    if client.jwks is not None:
        answer["jwks"] = json.loads(client.jwks)
    if client.jwks_uri is not None:
        answer["jwks_uri"] = client.jwks_uri
    return answer


def _container(request: web.Request) -> Container:
    return request.app[CONTAINER]


def _page_json(page: Page[Client]) -> dict[str, Any]:
    return {"items": [client_json(c) for c in page.items], "next_cursor": page.next_cursor}


async def list_clients(request: web.Request) -> web.Response:
    """GET /oauth/clients?limit&cursor&org_id → 200 ``{"items": [Client], "next_cursor"}``;
    403 below org_admin, 404 for another organization's ``org_id``, 422 bad paging."""
    caller = await principal(request)
    page = await _container(request).list_clients()(caller, **page_query(request))
    return json_response(_page_json(page))


async def create_client(request: web.Request) -> web.Response:
    """POST /oauth/clients → 201 ``Client`` + ``"client_secret"`` (shown once; none for a
    public client); 403 below org_admin, 404 another organization's ``org_id``, 422 bad
    values."""
    caller = await principal(request)
    body = await read_json(request, ClientRegistration)
    flow = {k: getattr(body, k) for k in _CODE_FLOW_PATCH}
    made = await _container(request).create_client()(
        caller, body.name, body.scopes, audience=body.audience, org_id=body.org_id,
        require_dpop=body.require_dpop,
        access_token_signed_response_alg=body.access_token_signed_response_alg,
        public=body.public, **flow,
    )  # fmt: skip
    answer = client_json(made.client)
    if made.client_secret is not None:
        answer["client_secret"] = made.client_secret
    return json_response(answer, status=201, headers={"Cache-Control": "no-store"})


async def get_client(request: web.Request) -> web.Response:
    """GET /oauth/clients/{client_id} → 200 ``Client``; 403 below org_admin, 404 missing or of
    another organization."""
    caller = await principal(request)
    client = await _container(request).get_client()(caller, path_id(request, "client_id"))
    return json_response(client_json(client))


async def update_client(request: web.Request) -> web.Response:
    """PATCH /oauth/clients/{client_id} → 200 ``Client``; 403 / 404 as GET, 422 bad values or
    an empty body. ``"jwks": null`` / ``"jwks_uri": null`` clear that field (``CLEAR``); any
    other ``null`` is 422."""
    caller = await principal(request)
    body, nulls = await read_json_nulls(request, ClientPatch, CLEARABLE_FIELDS)
    changes = attrs.asdict(body) | dict.fromkeys(nulls, CLEAR)
    client = await _container(request).update_client()(
        caller, path_id(request, "client_id"), **changes
    )
    return json_response(client_json(client))


async def delete_client(request: web.Request) -> web.Response:
    """DELETE /oauth/clients/{client_id} → 204; its live tokens are inactive at once."""
    caller = await principal(request)
    await _container(request).delete_client()(caller, path_id(request, "client_id"))
    return web.Response(status=204)


async def rotate_client_secret(request: web.Request) -> web.Response:
    """POST /oauth/clients/{client_id}/secret → 200 ``{"client_secret"}`` (shown once); the
    previous secret works ``oauth.secret_grace`` more seconds."""
    caller = await principal(request)
    secret = await _container(request).rotate_client_secret()(caller, path_id(request, "client_id"))
    return json_response({"client_secret": secret}, headers={"Cache-Control": "no-store"})


# --------------------------------------------------------------------------- OpenAPI

_CLIENT_ID = id_parameter("client_id", "client id")
_SCOPES = {"type": "array", "maxItems": MAX_SCOPES,
           "items": {"type": "string", "pattern": f"^{SCOPE_TOKEN.pattern}$"}}  # fmt: skip
_ONE_AUDIENCE = {"type": "string", "minLength": 1, "maxLength": MAX_AUDIENCE_LENGTH}
_AUDIENCES = {"type": "array", "minItems": 1, "maxItems": MAX_AUDIENCES, "items": _ONE_AUDIENCE}
_AUDIENCE = {"oneOf": [_ONE_AUDIENCE, _AUDIENCES]}
_NAME = {"type": "string", "minLength": 1, "maxLength": MAX_NAME_LENGTH, "pattern": NAME_PATTERN}
_SIGNING_ALG = {"type": "string", "enum": list(ALGORITHMS)}
_URI = {"type": "string", "minLength": 1, "maxLength": MAX_REDIRECT_URI_LENGTH}
_URIS = {"type": "array", "maxItems": MAX_REDIRECT_URIS, "items": _URI}
_CODE_FLOW = {
    "grant_types": {"type": "array", "minItems": 1, "maxItems": len(GRANT_TYPES),
                    "items": {"type": "string", "enum": list(GRANT_TYPES)}},
    "redirect_uris": _URIS, "post_logout_redirect_uris": _URIS,
    "token_endpoint_auth_method": {"type": "string", "enum": list(TOKEN_ENDPOINT_AUTH_METHODS)},
    "skip_consent": {"type": "boolean"}, "all_organizations": {"type": "boolean"},
    "logo_uri": _URI, "policy_uri": _URI, "tos_uri": _URI,
    "id_token_signed_response_alg": _SIGNING_ALG,
    "require_pushed_authorization_requests": {"type": "boolean"},
    "jwks": {"type": "object", "required": ["keys"],
             "properties": {"keys": {"type": "array", "minItems": 1, "maxItems": 10,
                                     "items": {"type": "object"}}}},
    "jwks_uri": _URI,
    "backchannel_logout_uri": _URI, "backchannel_logout_session_required": {"type": "boolean"},
}  # fmt: skip
_NEW_CLIENT = {
    "type": "object",
    "required": ["name", "scopes"],
    "properties": {"name": _NAME, "scopes": _SCOPES, "audience": _AUDIENCE,
                   "org_id": {"type": "string", "minLength": 1,
                              "maxLength": MAX_ORG_ID_LENGTH, "pattern": ORG_ID_PATTERN},
                   "require_dpop": {"type": "boolean"},
                   "access_token_signed_response_alg": _SIGNING_ALG,
                   "public": {"type": "boolean"}, **_CODE_FLOW},
}  # fmt: skip
_CLIENT_PATCH = {
    "type": "object",
    "minProperties": 1,
    "properties": {"name": _NAME, "scopes": _SCOPES, "audience": _AUDIENCE,
                   "require_dpop": {"type": "boolean"}, "disabled": {"type": "boolean"},
                   "access_token_signed_response_alg": _SIGNING_ALG, **_CODE_FLOW,
                   # null clears them (a private_key_jwt client keeps one: 422 otherwise)
                   **{k: {"oneOf": [_CODE_FLOW[k], {"type": "null"}]}
                      for k in CLEARABLE_FIELDS}},
}  # fmt: skip
_P = "Problem"

ROUTES = [
    RouteSpec("GET", "/oauth/clients", list_clients,
              "List OAuth clients (org_admin: own organization)",
              {200: "ClientPage", 401: _P, 403: _P, 404: _P, 422: _P},
              bearer=True, parameters=PAGING, tag="oauth"),
    RouteSpec("POST", "/oauth/clients", create_client,
              "Register an OAuth client; its secret is shown once",
              {201: "NewClient", 400: _P, 401: _P, 403: _P, 404: _P, 413: _P, 422: _P},
              request=_NEW_CLIENT, bearer=True, tag="oauth"),
    RouteSpec("GET", "/oauth/clients/{client_id}", get_client, "One OAuth client",
              {200: "Client", 401: _P, 403: _P, 404: _P},
              bearer=True, parameters=(_CLIENT_ID,), tag="oauth"),
    RouteSpec("PATCH", "/oauth/clients/{client_id}", update_client,
              "Change an OAuth client (disabling it makes its tokens inactive)",
              {200: "Client", 400: _P, 401: _P, 403: _P, 404: _P, 413: _P, 422: _P},
              request=_CLIENT_PATCH, bearer=True, parameters=(_CLIENT_ID,), tag="oauth"),
    RouteSpec("DELETE", "/oauth/clients/{client_id}", delete_client,
              "Delete an OAuth client (its tokens become inactive)",
              {204: "No Content", 401: _P, 403: _P, 404: _P},
              bearer=True, parameters=(_CLIENT_ID,), tag="oauth"),
    RouteSpec("POST", "/oauth/clients/{client_id}/secret", rotate_client_secret,
              "Give an OAuth client a new secret (shown once)",
              {200: "ClientSecret", 401: _P, 403: _P, 404: _P},
              bearer=True, parameters=(_CLIENT_ID,), tag="oauth"),
]  # fmt: skip
"""The client registry routes of docs/reference/oauth-and-oidc.md."""
