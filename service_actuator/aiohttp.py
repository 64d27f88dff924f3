"""aiohttp integration: mounts an :class:`~service_actuator.core.Actuator` under ``/actuator``.

Routes (contract section 4)::

    GET  {prefix}/health        health     200 UP / 503 DOWN
    GET  {prefix}/health/live   liveness   200 always
    GET  {prefix}/health/ready  readiness  200 UP / 503 DOWN
    GET  {prefix}/info          info       200
    GET  {prefix}/metrics       metrics    200 / 406 / 501 (problem+json)
    POST {prefix}/refresh       refresh    200 / 401 / 403 / 422 / 501 (problem+json)

This module is named after the framework it adapts; inside the package ``import aiohttp``
still means the library (absolute imports), so the name does not shadow it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

from service_actuator.core import Actuator, ActuatorResponse

__all__ = ["ACTUATOR_KEY", "setup_actuator", "to_aiohttp"]

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
