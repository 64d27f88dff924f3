"""``RouteSpec``: one description of a route feeds both the router and /openapi.json."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import attrs
from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

ID_PATTERN = "[0-9a-f]{32}"
"""The form of every resource id (UUID4 as 32 lower-case hex characters). Path segments that
name a resource only match this, so any other value is a 404 before a use case or adapter
sees it (a U+0000, say, which PostgreSQL ``text`` cannot hold)."""


@attrs.frozen
class RouteSpec:
    """One route: registered on the router and described in /openapi.json from the same data.

    ``path`` uses ``{name}`` placeholders; those listed in ``ids`` only match ``ID_PATTERN``.
    ``request`` is the JSON Schema of the body (or None), sent as ``media_type``; ``responses``
    maps status → description;
    ``bearer`` marks routes that need an access token; ``parameters`` are OpenAPI parameter objects.
    """

    method: str
    path: str
    handler: Handler
    summary: str
    responses: dict[int, str]
    request: dict[str, Any] | None = None
    bearer: bool = False
    parameters: tuple[dict[str, Any], ...] = ()
    tag: str = "auth"
    media_type: str = "application/json"

    def router_path(self) -> str:
        """``path`` with every ``{…id}`` placeholder restricted to ``ID_PATTERN`` (aiohttp's
        ``{name:regex}`` form)."""
        parts = []
        for segment in self.path.split("/"):
            if segment.startswith("{") and segment.endswith("id}"):
                segment = f"{segment[:-1]}:{ID_PATTERN}}}"
            parts.append(segment)
        return "/".join(parts)


def id_parameter(name: str, description: str) -> dict[str, Any]:
    """The OpenAPI parameter of the path segment ``{name}``: a required ``ID_PATTERN`` string."""
    return {"name": name, "in": "path", "required": True, "description": description,
            "schema": {"type": "string", "pattern": f"^{ID_PATTERN}$"}}  # fmt: skip


def add_routes(app: web.Application, specs: list[RouteSpec]) -> None:
    """Register every spec on ``app``'s router."""
    for spec in specs:
        app.router.add_route(spec.method, spec.router_path(), spec.handler)
