"""The admin console's routes (docs/reference/console.md), registered by ``create_app`` as pages
(``RouteSpec(page=True)``: listed under ``x-authsvc-pages`` in /openapi.json)."""

from __future__ import annotations

from entrypoints.http.console import audit, clients, groups, invitations, providers, users
from entrypoints.http.routing import RouteSpec

_HTML = "HTML page"
_FORM = "application/x-www-form-urlencoded"
_GET = {200: _HTML, 303: "See other (303): sign in first", 403: _HTML, 404: _HTML, 422: _HTML}
_POST = {303: "See other (303)", 403: _HTML, 404: _HTML, 409: _HTML, 422: _HTML}

ROUTES = [
    RouteSpec(method, path, handler, (handler.__doc__ or path).split("→")[0].strip()[:120],
              _GET if method == "GET" else _POST,
              request=None if method == "GET" else {"type": "object", "properties": {}},
              media_type="application/json" if method == "GET" else _FORM,
              tag="admin console", page=True)
    for method, path, handler in (
        *audit.ROUTES_TABLE,
        *users.ROUTES_TABLE,
        *invitations.ROUTES_TABLE,
        *groups.ROUTES_TABLE,
        *clients.ROUTES_TABLE,
        *providers.ROUTES_TABLE,
    )
]  # fmt: skip
"""The pages of docs/reference/console.md."""
