"""The aiohttp application factory."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from aiohttp import web

from entrypoints.container import Container
from entrypoints.http import admin_routes, auth_routes, wellknown_routes
from entrypoints.http.common import RouteSpec, add_routes
from entrypoints.http.keys import CONTAINER
from entrypoints.http.openapi import ROUTE_SPECS
from entrypoints.http.problems import problem_middleware


async def _resources(app: web.Application) -> AsyncIterator[None]:
    """Open storage (applying migrations) and load the signing keys; close storage on exit."""
    container = app[CONTAINER]
    uow = container.uow()
    await uow.open()
    await asyncio.to_thread(container.signer)  # generates keys on first start
    try:
        yield
    finally:
        await uow.close()


def create_app(container: Container) -> web.Application:
    """The authsvc aiohttp app: routes of contract sections 2–4, problem+json errors, a request
    body limit of ``server.max_body_bytes`` bytes (413 beyond), resources in ``cleanup_ctx``."""
    config = container.config()
    app = web.Application(
        client_max_size=config.server.max_body_bytes,
        middlewares=[problem_middleware],
    )
    app[CONTAINER] = container
    specs: list[RouteSpec] = [*auth_routes.ROUTES, *admin_routes.ROUTES, *wellknown_routes.ROUTES]
    add_routes(app, specs)
    app[ROUTE_SPECS] = specs
    app.cleanup_ctx.append(_resources)
    return app
