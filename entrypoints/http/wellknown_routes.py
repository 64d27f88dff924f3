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
    """GET /.well-known/openid-configuration → issuer (the ``auth`` settings in force),
    jwks_uri, algorithms (of the keys that verify live tokens): OpenID Connect Discovery."""
    container = request.app[CONTAINER]
    configured = container.auth_settings().current.issuer
    issuer = configured.rstrip("/")
    algs = sorted({key["alg"] for key in container.signer().jwks()["keys"]})
    return json_response(
        {
            "issuer": configured,  # exactly the tokens' iss (RFC 8414 §3.3)
            "jwks_uri": issuer + JWKS_PATH,
            "token_endpoint": issuer + "/login",
            "userinfo_endpoint": issuer + "/me",
            "grant_types_supported": ["password", "refresh_token"],
            "response_types_supported": ["token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": algs,
            "token_endpoint_auth_methods_supported": ["none"],
            "claims_supported": [
                "sub", "email", "role", "org_id", "iss", "aud", "iat", "exp", "groups", "jti",
            ],
        }
    )  # fmt: skip


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
