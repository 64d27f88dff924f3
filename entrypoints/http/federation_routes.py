"""Login with other identity providers, the JSON API (docs/reference/federation.md): ``POST
/login/federated`` (a native app's ID token), ``GET /me/identities``, ``DELETE
/me/identities/{provider}``. The browser flow's routes are in
``entrypoints.http.pages.federation``."""

from __future__ import annotations

import attrs
from aiohttp import web

from entrypoints.config.converters import UncheckedText
from entrypoints.http.auth_routes import pair_json
from entrypoints.http.caller import authenticated
from entrypoints.http.keys import CONTAINER
from entrypoints.http.requests import client_address, read_json, user_agent
from entrypoints.http.routing import RouteSpec
from entrypoints.http.views import iso, json_response

_MAX_TOKEN = 16_384


@attrs.frozen
class FederatedLoginRequest:
    provider: UncheckedText
    id_token: UncheckedText
    nonce: UncheckedText | None = None


async def login_federated(request: web.Request) -> web.Response:
    """POST /login/federated ``{"provider", "id_token", "nonce"}`` → 200 TokenPair; 401
    ``mfa_required``; 400 ``federation_failed`` (also without a nonce, for a nonce used before
    at that issuer, or a token over 300 s old); 404 unknown provider; 409 ``account_exists``;
    403 ``federation_not_allowed`` / ``account_disabled``."""
    body = await read_json(request, FederatedLoginRequest)
    container = request.app[CONTAINER]
    client = client_address(request, container.config().server.trusted_proxies)
    federated = container.federated_login()
    if len(body.provider) > 64:
        from domain.errors import NotFound

        raise NotFound("no such identity provider")
    federated.provider(body.provider)  # 404 before anything else
    if len(body.id_token) > _MAX_TOKEN or (body.nonce is not None and len(body.nonce) > 512):
        from domain.errors import FederationFailed

        raise FederationFailed("signing in with this provider failed")
    pair = await federated.native(
        body.provider, body.id_token, body.nonce, client, user_agent(request)
    )
    return pair_json(pair)


async def list_identities(request: web.Request) -> web.Response:
    """GET /me/identities → 200 ``{"items": [Identity]}``."""
    caller = await authenticated(request)
    items = await request.app[CONTAINER].own_identities().list(caller.user.id)
    return json_response(
        {
            "items": [
                {
                    "provider": i.provider,
                    "subject": i.subject,
                    "email": i.email,
                    "linked_at": iso(i.linked_at),
                    "last_used_at": None if i.last_used_at is None else iso(i.last_used_at),
                }
                for i in items
            ]
        }
    )


async def unlink_identity(request: web.Request) -> web.Response:
    """DELETE /me/identities/{provider} → 204; 404 none linked; 409 ``last_login_method``."""
    caller = await authenticated(request)
    provider = request.match_info["provider"][:64]
    await request.app[CONTAINER].own_identities().unlink(caller.user.id, provider)
    return web.Response(status=204)


_PROVIDER = {
    "name": "provider",
    "in": "path",
    "required": True,
    "description": "the provider's id ([a-z0-9-]{1,32})",
    "schema": {"type": "string", "minLength": 1},
}

ROUTES = [
    RouteSpec("POST", "/login/federated", login_federated,
              "Log in with an ID token a native app got from an identity provider",
              {200: "TokenPair", 400: "Problem", 401: "Problem", 403: "Problem", 404: "Problem",
               409: "Problem", 422: "Problem", 429: "Problem"},
              request={"type": "object", "required": ["provider", "id_token"],
                       "properties": {"provider": {"type": "string"},
                                      "id_token": {"type": "string"},
                                      "nonce": {"type": "string", "description":
                                                "needed (missing: 400 federation_failed); the"
                                                " token's own, accepted once per issuer until"
                                                " its exp; the token at most 300 s old"}}}),
    RouteSpec("GET", "/me/identities", list_identities,
              "The caller's identities at other providers",
              {200: "IdentityList", 401: "Problem"}, bearer=True),
    RouteSpec("DELETE", "/me/identities/{provider}", unlink_identity,
              "Unlink the caller's identity at a provider",
              {204: "No Content", 401: "Problem", 404: "Problem", 409: "Problem"},
              bearer=True, parameters=(_PROVIDER,)),
]  # fmt: skip
"""The JSON routes of docs/reference/federation.md."""
