"""The admin console's identity providers (docs/reference/console.md): the configured
``[[federation.providers]]`` with their readiness, read only (``ListIdentityProviders``, which asks
``domain.policy``: org_admin and superadmin)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from domain.policy import Principal
from entrypoints.http.console.web import console_page, render
from entrypoints.http.keys import CONTAINER

__all__ = ["ROUTES_TABLE"]


@console_page
async def providers_page(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """GET /ui/admin/providers → each configured provider, its settings for sign-in and whether
    its discovery answered (``reachable``, ``unreachable`` with the reason, ``checking``,
    ``disabled``)."""
    listed = await request.app[CONTAINER].identity_providers()(me)
    return render(request, me, "admin/providers.html", {"providers": listed})


ROUTES_TABLE: list[tuple[str, str, Any]] = [
    ("GET", "/ui/admin/providers", providers_page),
]
"""(method, path, handler) of the identity providers page."""
