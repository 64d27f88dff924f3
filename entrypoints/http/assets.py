"""The static files of the hosted pages and the console, served one way
(docs/reference/oauth-and-oidc.md, docs/reference/console.md): every file of
``entrypoints/http/static/`` at ``GET /ui/static/{name}``, cached a year and linked with a
content version (``asset(name)``), and the one generated stylesheet, ``GET /ui/brand.css``,
which sets the CSS custom property ``--brand`` from ``ui.primary_color``."""

from __future__ import annotations

import hashlib
from pathlib import Path

from aiohttp import web

from entrypoints.http.keys import CONTAINER
from entrypoints.http.pages.web import PAGE_HEADERS
from entrypoints.http.routing import RouteSpec

STATIC = Path(__file__).parent / "static"
"""The shipped static files (``style.css``, ``admin.css``, ``webauthn-json.js`` with the
``passkey.js`` and ``account-passkey.js`` that use it, ``htmx.min.js``)."""
_TYPES = {".css": "text/css", ".js": "text/javascript"}
_LONG_CACHE = "public, max-age=31536000, immutable"
_FILES = {
    path.name: path.read_bytes() for path in sorted(STATIC.iterdir()) if path.suffix in _TYPES
}
"""The shipped ``.css``/``.js`` files, read once at import (they change only with a release)."""
_VERSIONS = {name: hashlib.sha256(body).hexdigest()[:12] for name, body in _FILES.items()}


def asset(name: str) -> str:
    """The URL of the static file ``name`` with its content version,
    ``/ui/static/<name>?v=<12 hex digits of its SHA-256>``; raises ``KeyError`` for a name
    that is not a shipped ``.css``/``.js`` file (a template bug shows at once)."""
    return f"/ui/static/{name}?v={_VERSIONS[name]}"


async def static_file(request: web.Request) -> web.Response:
    """GET /ui/static/{name} → a shipped ``.css`` or ``.js`` file with the page headers,
    cached a year (its links change with its content); 404 for any other name."""
    name = request.match_info["name"]
    body = _FILES.get(name)
    if body is None:
        raise web.HTTPNotFound()
    return web.Response(
        body=body,
        content_type=_TYPES[Path(name).suffix],
        headers={**PAGE_HEADERS, "Cache-Control": _LONG_CACHE},
    )


async def brand_stylesheet(request: web.Request) -> web.Response:
    """GET /ui/brand.css[?c=<colour>] → ``:root { --brand: <ui.primary_color>; }``, the colour
    in force (a validated ``#rgb``/``#rrggbb``; the query is ignored). The pages link it with
    their colour as ``c``, so a cached copy of another colour is never used after a
    configuration refresh changes it; cached five minutes."""
    color = request.app[CONTAINER].live_config().current.ui.primary_color
    return web.Response(
        text=f":root {{ --brand: {color}; }}\n",
        content_type="text/css",
        headers={**PAGE_HEADERS, "Cache-Control": "public, max-age=300"},
    )


ROUTES = [
    RouteSpec("GET", "/ui/static/{name}", static_file,
              "A static file of the hosted pages or the console (stylesheets, scripts)",
              {200: "JavaScript or CSS", 404: "Not found"}, tag="ui", page=True),
    RouteSpec("GET", "/ui/brand.css", brand_stylesheet,
              "The brand colour as the CSS custom property --brand",
              {200: "CSS"}, tag="ui", page=True),
]  # fmt: skip
"""The static routes, registered by ``create_app``."""
