"""The aiohttp application factory."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from aiohttp import web

from entrypoints.container import Container
from entrypoints.http import actuator_routes, admin_routes, auth_routes, wellknown_routes
from entrypoints.http.common import RouteSpec, add_routes
from entrypoints.http.keys import CONTAINER
from entrypoints.http.openapi import ROUTE_SPECS
from entrypoints.http.problems import problem_middleware
from entrypoints.telemetry import tracing_middleware
from service_actuator import setup_actuator
from service_actuator.metrics import metrics_middleware


async def _resources(app: web.Application) -> AsyncIterator[None]:
    """Open storage (applying migrations) and load the signing keys; close storage and flush
    pending spans on exit."""
    container = app[CONTAINER]
    uow = container.uow()
    await uow.open()
    await asyncio.to_thread(container.signer)  # generates keys on first start
    try:
        yield
    finally:
        await uow.close()
        await asyncio.to_thread(container.telemetry().shutdown)


def create_app(container: Container) -> web.Application:
    """The authsvc aiohttp app: routes of contract sections 2–4 (the actuator under
    ``/actuator``), problem+json errors, a request body limit of ``server.max_body_bytes`` bytes
    (413 beyond), resources in ``cleanup_ctx``.

    Middlewares, outermost first: tracing (a span per request), HTTP metrics
    (``http_server_requests_total``, ``http_server_request_duration_seconds``), problem+json.
    Wiring done here, once per container: the service metrics and the ``ConfigChanged``
    subscribers.

    Raises ``ConfigError`` (``telemetry.exporter = "otlp"`` without its package) and
    ``ServiceActuatorError`` (``PROMETHEUS_MULTIPROC_DIR`` is not a directory).
    """
    config = container.config()
    telemetry = container.telemetry()
    app = web.Application(
        client_max_size=config.server.max_body_bytes,
        middlewares=[
            tracing_middleware(telemetry),
            metrics_middleware(container.metrics_registry()),
            problem_middleware,
        ],
    )
    app[CONTAINER] = container
    container.service_metrics()
    container.config_subscriptions()
    specs: list[RouteSpec] = [*auth_routes.ROUTES, *admin_routes.ROUTES, *wellknown_routes.ROUTES]
    add_routes(app, specs)
    setup_actuator(app, container.actuator())
    app[ROUTE_SPECS] = [*specs, *actuator_routes.route_specs(app)]
    app.cleanup_ctx.append(_resources)
    return app
