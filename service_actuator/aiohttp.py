"""aiohttp integration: mounts an :class:`~service_actuator.core.Actuator` under ``/actuator``
and records HTTP server metrics (:func:`metrics_middleware`).

Routes (docs/reference/operations.md)::

    GET  {prefix}/health        health     200 UP / 503 DOWN
    GET  {prefix}/health/live   liveness   200 always
    GET  {prefix}/health/ready  readiness  200 UP / 503 DOWN
    GET  {prefix}/info          info       200
    GET  {prefix}/metrics       metrics    200 / 406 / 501 (problem+json)
    POST {prefix}/refresh       refresh    200 / 401 / 403 / 422 / 501 (problem+json)

The only module of ``service_actuator`` that imports a web framework (an import-linter contract
keeps it so). It is named after the framework it adapts; inside the package ``import aiohttp``
still means the library (absolute imports), so the name does not shadow it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from service_actuator.core import Actuator
from service_actuator.http_metrics import UNMATCHED, HttpServerMetrics, route_label
from service_actuator.responses import ActuatorResponse

__all__ = [
    "ACTUATOR_KEY",
    "UNMATCHED",
    "metrics_middleware",
    "route_template",
    "setup_actuator",
    "to_aiohttp",
]

ACTUATOR_KEY: web.AppKey[Actuator] = web.AppKey("service_actuator", Actuator)
"""Where :func:`setup_actuator` stores the actuator: ``app[ACTUATOR_KEY]``."""


def to_aiohttp(response: ActuatorResponse) -> web.Response:
    """An aiohttp response with the status, headers, ``Content-Type`` and body given."""
    headers = {**response.headers, "Content-Type": response.content_type}
    return web.Response(status=response.status, body=response.body, headers=headers)


def setup_actuator(
    app: web.Application, actuator: Actuator, prefix: str = "/actuator"
) -> web.Application:
    """Add the six actuator routes to ``app`` and store ``actuator`` under ``ACTUATOR_KEY``.

    Route names are ``actuator.health``, ``actuator.liveness``, ``actuator.readiness``,
    ``actuator.info``, ``actuator.metrics`` and ``actuator.refresh``. GET routes answer HEAD too.

    Args:
        app: the application (not yet frozen).
        actuator: the actuator to serve.
        prefix: the path prefix, ``/`` followed by segments, no trailing slash.

    Returns:
        ``app``.

    Raises:
        ValueError: a malformed ``prefix``.
        RuntimeError: the app is frozen (aiohttp's own error).
    """
    if not prefix.startswith("/") or (len(prefix) > 1 and prefix.endswith("/")):
        raise ValueError(f"prefix must start with '/' and not end with one: {prefix!r}")
    base = "" if prefix == "/" else prefix
    app[ACTUATOR_KEY] = actuator

    def wrap(
        call: Callable[[web.Request], Awaitable[ActuatorResponse]],
    ) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def handler(request: web.Request) -> web.Response:
            return to_aiohttp(await call(request))

        return handler

    async def metrics(request: web.Request) -> ActuatorResponse:
        return await actuator.metrics(request, accept=request.headers.get("Accept"))

    app.router.add_get(f"{base}/health", wrap(actuator.health), name="actuator.health")
    app.router.add_get(f"{base}/health/live", wrap(actuator.liveness), name="actuator.liveness")
    app.router.add_get(f"{base}/health/ready", wrap(actuator.readiness), name="actuator.readiness")
    app.router.add_get(f"{base}/info", wrap(actuator.info), name="actuator.info")
    app.router.add_get(f"{base}/metrics", wrap(metrics), name="actuator.metrics")
    app.router.add_post(f"{base}/refresh", wrap(actuator.refresh), name="actuator.refresh")
    return app


# --------------------------------------------------------------------------- HTTP metrics


def route_template(request: web.Request) -> str:
    """The matched route's template (``/users/{id}``), never the raw path; else ``UNMATCHED``."""
    return route_label(_matched_template(request))


def metrics_middleware(registry: Any = None) -> Middleware:
    """An aiohttp middleware recording HTTP server metrics into ``registry``.

    A thin shell over :class:`~service_actuator.http_metrics.HttpServerMetrics`, which holds the
    families and the label rules: ``http_server_requests_total{method, route, status}`` (counter)
    and ``http_server_request_duration_seconds{method, route}`` (histogram, seconds); ``route``
    is the route template (``request.match_info.route.resource.canonical``), ``UNMATCHED`` for
    404/405; non-standard methods are counted as ``OTHER``. Here only the status is read:
    handler exceptions count as their HTTP status (``HTTPException``) or 500; requests
    cancelled by a client disconnect are not counted.

    Calling it again with the same registry reuses the same metric objects.

    Args:
        registry: a ``prometheus_client.CollectorRegistry``; default ``prometheus_client.REGISTRY``.

    Returns:
        A new-style aiohttp middleware; a pass-through one when prometheus-client is missing.
    """
    http = HttpServerMetrics(registry)
    if not http.enabled:

        @web.middleware
        async def passthrough(request: web.Request, handler: Handler) -> web.StreamResponse:
            return await handler(request)

        return passthrough

    @web.middleware
    async def record(request: web.Request, handler: Handler) -> web.StreamResponse:
        started = http.start()
        try:
            response = await handler(request)
        except web.HTTPException as exc:
            http.finish(started, request.method, _matched_template(request), exc.status)
            raise
        except Exception:
            http.finish(started, request.method, _matched_template(request), 500)
            raise
        # CancelledError (a client disconnect) is a BaseException: nothing is recorded.
        http.finish(started, request.method, _matched_template(request), response.status)
        return response

    return record


def _matched_template(request: web.Request) -> str | None:
    """The matched route's template (sub-app prefix included), or None when none matched."""
    resource = request.match_info.route.resource
    return None if resource is None else resource.canonical
