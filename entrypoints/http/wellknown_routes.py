"""Discovery routes: /.well-known/jwks.json (RFC 7517), /.well-known/openid-configuration
(OpenID Connect Discovery 1.0, the members a resource server needs) and /openapi.json."""

from __future__ import annotations

from aiohttp import web

from entrypoints.http.keys import CONTAINER
from entrypoints.http.routing import RouteSpec
from entrypoints.http.views import json_response

JWKS_PATH = "/.well-known/jwks.json"


async def jwks(request: web.Request) -> web.Response:
    """GET /.well-known/jwks.json → the JWK Set of every key that may still verify a live token."""
    signer = request.app[CONTAINER].signer()
    return json_response(
        signer.jwks(),
        content_type="application/jwk-set+json",
        headers={"Cache-Control": "public, max-age=60"},
    )


async def openid_configuration(request: web.Request) -> web.Response:
    """GET /.well-known/openid-configuration → OpenID Connect Discovery: the endpoints and
    algorithms of the RFC 8414 metadata (``oauth_routes.endpoint_metadata``), ``userinfo`` (/me),
    the subject types, ID-token algorithms and claims a resource server meets, and back-channel
    logout with ``sid`` (OpenID Connect Back-Channel Logout 1.0 §2.1)."""
    from entrypoints.http.oauth_routes import endpoint_metadata

    doc = endpoint_metadata(request)
    issuer = doc["token_endpoint"].removesuffix("/oauth/token")
    algs = doc["access_token_signing_alg_values_supported"]
    del issuer
    id_algs = sorted(algs, key=lambda a: a != "RS256")  # RS256 first (OIDC Core §15.1)
    doc.update(
        {
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": id_algs,
            "claims_supported": [
                "sub", "iss", "aud", "azp", "exp", "iat", "auth_time", "nonce", "sid", "amr",
                "acr", "email", "email_verified", "preferred_username", "role", "org_id",
                "groups", "jti", "client_id", "scope",
            ],
            "acr_values_supported": ["1", "2"],
            "prompt_values_supported": ["none", "login", "consent"],
            "request_parameter_supported": False,
            "request_uri_parameter_supported": False,
            "claims_parameter_supported": False,
            # OpenID Connect Back-Channel Logout 1.0 §2.1 (docs/reference/oauth-and-oidc.md).
            "backchannel_logout_supported": True,
            "backchannel_logout_session_supported": True,
        }
    )  # fmt: skip
    return json_response(doc)


async def openapi(request: web.Request) -> web.Response:
    """GET /openapi.json → the OpenAPI 3.1 document of every route of this app."""
    from entrypoints.http.openapi import build_openapi

    return json_response(build_openapi(request.app))


ROUTES = [
    RouteSpec("GET", JWKS_PATH, jwks, "JWK Set of the keys that verify live access tokens",
              {200: "JWK Set"}, tag="discovery"),
    RouteSpec("GET", "/.well-known/openid-configuration", openid_configuration,
              "Discovery document for resource servers", {200: "Discovery document"},
              tag="discovery"),
    RouteSpec("GET", "/openapi.json", openapi, "This OpenAPI 3.1 document",
              {200: "OpenAPI document"}, tag="discovery"),
]  # fmt: skip
