"""Routes of docs/reference/scim.md: SCIM 2.0 provisioning at ``/scim/v2`` (RFC 7644).

Each route authenticates the caller with ``application.scim.access.ScimAuthenticator`` (a client
credentials token with the ``scim`` scope; the client's organization scopes everything); its
handler (``entrypoints.http.scim_handlers``) reads the SCIM body or query with
``entrypoints.http.scim_wire`` and hands over to the use cases of ``application.scim`` and
``application.accounts``. Every error is a SCIM ``Error`` message; every body is
``application/scim+json``. The discovery documents (``ServiceProviderConfig``, ``ResourceTypes``,
``Schemas``) need no token (RFC 7644 §4).

The handlers' module, and ``scim2-models`` with it (about a second of imports), is loaded at the
first SCIM request, in a thread: a service nobody provisions never pays for it, and no request
waits on the event loop while it loads.
"""

from __future__ import annotations

import asyncio
import importlib
import re
import sys
from collections.abc import Awaitable, Callable

from aiohttp import web

from entrypoints.http.routing import RouteSpec, id_parameter

PREFIX = "/scim/v2"
"""Where SCIM lives (docs/reference/scim.md)."""

USERS = "/Users"
"""The users' endpoint under ``PREFIX`` (RFC 7644 §3.2)."""

SCIM_MEDIA_TYPE = "application/scim+json"
"""The media type of every SCIM body (RFC 7644 §3.1)."""

_HANDLERS = "entrypoints.http.scim_handlers"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _lazy(name: str) -> Handler:
    """The handler ``name`` of ``scim_handlers.HANDLERS``, its module imported at first use."""

    async def scim_handler(request: web.Request) -> web.StreamResponse:
        module = sys.modules.get(_HANDLERS)
        if module is None:
            module = await asyncio.to_thread(importlib.import_module, _HANDLERS)
        handler: Handler = module.HANDLERS[name]
        return await handler(request)

    scim_handler.__name__ = name
    return scim_handler


_ERRORS = {400: "ScimError", 401: "ScimError", 403: "ScimError", 404: "ScimError"}
_WRITE_ERRORS = {**_ERRORS, 408: "ScimError", 409: "ScimError", 413: "ScimError", 503: "ScimError"}


def _route(
    method: str,
    path: str,
    handler: str,
    summary: str,
    ok: dict[int, str],
    *,
    bearer: bool = True,
    body: bool = False,
) -> RouteSpec:
    errors = _WRITE_ERRORS if method != "GET" else _ERRORS
    request = {"$ref": "#/components/schemas/ScimResource"} if body else None
    params = tuple(id_parameter(n, f"the {n} (opaque)") for n in re.findall(r"\{(\w+)\}", path))
    return RouteSpec(
        method, PREFIX + path, _lazy(handler), summary, {**ok, **errors},
        request=request, bearer=bearer, parameters=params, tag="scim",
        media_type=SCIM_MEDIA_TYPE,
    )  # fmt: skip


ROUTES = [
    _route("GET", "/Users", "list_users", "SCIM: list and filter users", {200: "ScimListResponse"}),
    _route("POST", USERS + "/.search", "search_users", "SCIM: search users",
           {200: "ScimListResponse"}, body=True),
    _route("POST", "/Users", "create_user", "SCIM: create a user", {201: "ScimResource"},
           body=True),
    _route("GET", "/Users/{id}", "get_user", "SCIM: a user", {200: "ScimResource"}),
    _route("PUT", "/Users/{id}", "replace_user", "SCIM: replace a user", {200: "ScimResource"},
           body=True),
    _route("PATCH", "/Users/{id}", "patch_user", "SCIM: change a user", {200: "ScimResource"},
           body=True),
    _route("DELETE", "/Users/{id}", "delete_user", "SCIM: delete a user", {204: "deleted"}),
    _route("GET", "/Groups", "list_groups", "SCIM: list and filter groups",
           {200: "ScimListResponse"}),
    _route("POST", "/Groups/.search", "search_groups", "SCIM: search groups",
           {200: "ScimListResponse"}, body=True),
    _route("POST", "/Groups", "create_group", "SCIM: create a group", {201: "ScimResource"},
           body=True),
    _route("GET", "/Groups/{id}", "get_group", "SCIM: a group", {200: "ScimResource"}),
    _route("PUT", "/Groups/{id}", "replace_group", "SCIM: replace a group", {200: "ScimResource"},
           body=True),
    _route("PATCH", "/Groups/{id}", "patch_group", "SCIM: change a group", {200: "ScimResource"},
           body=True),
    _route("DELETE", "/Groups/{id}", "delete_group", "SCIM: delete a group", {204: "deleted"}),
    _route("GET", "/ServiceProviderConfig", "get_service_provider_config",
           "SCIM: what this service provider supports", {200: "ScimResource"}, bearer=False),
    _route("GET", "/ResourceTypes", "list_resource_types", "SCIM: the resource types",
           {200: "ScimListResponse"}, bearer=False),
    _route("GET", "/ResourceTypes/{name}", "get_resource_type", "SCIM: one resource type",
           {200: "ScimResource"}, bearer=False),
    _route("GET", "/Schemas", "list_schemas", "SCIM: the schemas", {200: "ScimListResponse"},
           bearer=False),
    _route("GET", "/Schemas/{id}", "get_schema", "SCIM: one schema", {200: "ScimResource"},
           bearer=False),
    _route("POST", "/.search", "search_everything", "SCIM: search every resource type (501)",
           {501: "ScimError"}, body=True),
    _route("GET", "/{endpoint}", "no_such_endpoint", "SCIM: any other endpoint (404)", {},
           bearer=False),
]  # fmt: skip
"""The SCIM routes, each wrapped in ``scim_errors``."""
