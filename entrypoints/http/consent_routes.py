"""Routes of the consents table of docs/reference/oauth-and-oidc.md: the caller's consents to OpenID
Connect clients, listed and revoked (bearer auth, like ``/me/sessions``).

Each route authenticates the caller (401 ``invalid_token``; a disabled user's token too) and
hands over to a use case of ``application.oauth.consents``.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from application.oauth.consents import ListedConsent
from entrypoints.http.caller import principal
from entrypoints.http.keys import CONTAINER
from entrypoints.http.routing import RouteSpec, id_parameter, path_id
from entrypoints.http.views import iso, json_response


def consent_json(listed: ListedConsent) -> dict[str, Any]:
    """Contract ``Consent`` (section 15): client_id, client_name, scopes (as granted, in
    order), granted_at (the latest grant)."""
    consent = listed.consent
    return {
        "client_id": consent.client_id,
        "client_name": listed.client_name,
        "scopes": list(consent.scopes),
        "granted_at": iso(consent.granted_at),
    }


async def list_my_consents(request: web.Request) -> web.Response:
    """GET /me/consents → 200 ``{"items": [Consent]}``, newest grant first."""
    caller = await principal(request)
    consents = await request.app[CONTAINER].list_consents()(caller)
    return json_response({"items": [consent_json(c) for c in consents]})


async def revoke_my_consent(request: web.Request) -> web.Response:
    """DELETE /me/consents/{client_id} → 204; the sessions that client started for the caller
    end too (their refresh tokens fail from now on); 404 when the caller has no consent for
    that client."""
    caller = await principal(request)
    await request.app[CONTAINER].revoke_consent()(caller, path_id(request, "client_id"))
    return web.Response(status=204)


_P = "Problem"

ROUTES = [
    RouteSpec("GET", "/me/consents", list_my_consents,
              "The caller's consents to OpenID Connect clients, newest first",
              {200: "ConsentList", 401: _P}, bearer=True, tag="sessions"),
    RouteSpec("DELETE", "/me/consents/{client_id}", revoke_my_consent,
              "Revoke a consent; the sessions that client started for the caller end",
              {204: "No Content", 401: _P, 404: _P}, bearer=True,
              parameters=(id_parameter("client_id", "client id"),), tag="sessions"),
]  # fmt: skip
"""The routes of the consents table of docs/reference/oauth-and-oidc.md, registered by
``create_app``."""
