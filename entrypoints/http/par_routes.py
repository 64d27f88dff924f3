"""``POST /oauth/par`` (RFC 9126 §2; docs/reference/oauth-and-oidc.md): a client pushes its
authorization request and gets a ``request_uri`` for ``/oauth/authorize``. The client
authenticates as at the token endpoint (a public client with its ``client_id``); errors are RFC
6749 §5.2 JSON with ``Cache-Control: no-store`` (``entrypoints.http.oauth_routes``)."""

from __future__ import annotations

from aiohttp import web

from application.oauth.grants import OAuthError
from entrypoints.http.keys import CONTAINER
from entrypoints.http.oauth_routes import (
    CLIENT_AUTH_FORM,
    FORM,
    NO_STORE,
    OAUTH_ERROR,
    assertion_audiences,
    code_flow_client,
    oauth_error,
    read_form,
)
from entrypoints.http.routing import RouteSpec
from entrypoints.http.views import json_response


async def pushed_authorization_request(request: web.Request) -> web.Response:
    """POST /oauth/par with the authorization request's parameters → 201 ``{"request_uri",
    "expires_in"}``."""
    try:
        form = await read_form(request)
        container = request.app[CONTAINER]
        # client_id belongs to the authorization request (RFC 9126 §2.1): with HTTP Basic it
        # may come too, and push() checks it names the authenticated client
        basic = "Authorization" in request.headers
        auth_form = {k: v for k, v in form.items() if not (basic and k == "client_id")}
        client_id, secret, method = code_flow_client(request, auth_form)
        authenticator = container.code_client_authenticator()
        audiences = assertion_audiences(request, "/oauth/par")
        client = await authenticator.authenticate(client_id, secret, method, audiences)
        uri, expires_in = await container.pushed_authorization().push(client, list(form.items()))
    except OAuthError as e:
        return oauth_error(e)
    return json_response(
        {"request_uri": uri, "expires_in": expires_in}, status=201, headers=NO_STORE
    )


_PAR_FORM = {
    "type": "object",
    "required": ["response_type", "redirect_uri", "code_challenge", "code_challenge_method"],
    "properties": {name: {"type": "string"} for name in (
        "response_type", "redirect_uri", "scope", "state", "nonce", "code_challenge",
        "code_challenge_method", "prompt", "max_age", "login_hint", "acr_values",
    )} | CLIENT_AUTH_FORM,
}  # fmt: skip

ROUTES = [
    RouteSpec("POST", "/oauth/par", pushed_authorization_request,
              "Push an authorization request (RFC 9126)",
              {201: "Pushed authorization response (RFC 9126 §2.2)", 400: OAUTH_ERROR,
               401: OAUTH_ERROR, 413: "Problem"},
              request=_PAR_FORM, media_type=FORM, tag="oauth-protocol"),
]  # fmt: skip
"""The pushed authorization request endpoint of docs/reference/oauth-and-oidc.md."""
