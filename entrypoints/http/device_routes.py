"""``POST /oauth/device_authorization`` (RFC 8628 §3.1–3.2; docs/reference/oauth-and-oidc.md): a
device starts the device authorization grant. The client authenticates as at the token endpoint
(``client_secret_basic``, ``client_secret_post``, or a public client's ``client_id`` alone);
answers and errors are those of ``entrypoints.http.oauth_routes`` (RFC 6749 §5.2 JSON,
``Cache-Control: no-store``)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from entrypoints.http.keys import CONTAINER
from entrypoints.http.oauth_routes import (
    CLIENT_AUTH_FORM,
    FORM,
    OAUTH_ERROR,
    assertion_audiences,
    code_flow_client,
    oauth_endpoint,
    read_form,
)
from entrypoints.http.routing import RouteSpec


@oauth_endpoint
async def device_authorization(request: web.Request) -> dict[str, Any]:
    """POST /oauth/device_authorization [``scope``] → 200 ``{"device_code", "user_code",
    "verification_uri", "verification_uri_complete", "expires_in", "interval"}``."""
    form = await read_form(request)
    container = request.app[CONTAINER]
    client_id, secret, method = code_flow_client(request, form)
    client = await container.code_client_authenticator().authenticate(
        client_id, secret, method, assertion_audiences(request, "/oauth/device_authorization")
    )
    started = await container.device_flow().start(client, form.get("scope"))
    return {
        "device_code": started.device_code,
        "user_code": started.user_code,
        "verification_uri": started.verification_uri,
        "verification_uri_complete": started.verification_uri_complete,
        "expires_in": started.expires_in,
        "interval": started.interval,
    }


_DEVICE_FORM = {
    "type": "object",
    "properties": {"scope": {"type": "string"}, **CLIENT_AUTH_FORM},
}

ROUTES = [
    RouteSpec("POST", "/oauth/device_authorization", device_authorization,
              "Start the device authorization grant (RFC 8628)",
              {200: "Device authorization response (RFC 8628 §3.2)", 400: OAUTH_ERROR,
               401: OAUTH_ERROR, 413: "Problem"},
              request=_DEVICE_FORM, media_type=FORM, tag="oauth-protocol"),
]  # fmt: skip
"""The device authorization endpoint of docs/reference/oauth-and-oidc.md."""
