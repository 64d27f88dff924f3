"""The actuator endpoints of authsvc in ``/openapi.json`` (docs/reference/operations.md).

``service_actuator`` serves the six routes and ``entrypoints.actuator`` supplies what the library
leaves to the service (who may do what, what ``/actuator/info`` adds); this module gives the
``RouteSpec`` entries that describe the routes (:func:`route_specs`; documentation only, the
library registers the routes).
"""

from __future__ import annotations

from aiohttp import web

from entrypoints.http.routing import RouteSpec

# (route name given by setup_actuator, method, summary, responses, bearer)
_DOCS: tuple[tuple[str, str, str, dict[int, str], bool], ...] = (
    ("actuator.health", "GET",
     "Health over every indicator (db, signingKey); details per actuator.show_details",
     {200: "Health", 503: "Health"}, False),
    ("actuator.liveness", "GET", "Liveness: always UP, checks no dependency",
     {200: "Health"}, False),
    ("actuator.readiness", "GET", "Readiness over the readiness indicators (db, signingKey)",
     {200: "Health", 503: "Health"}, False),
    ("actuator.info", "GET", "Application name and version, git, python, auth and storage facts",
     {200: "Info"}, False),
    ("actuator.metrics", "GET",
     "Prometheus text 0.0.4, or OpenMetrics 1.0.0 with Accept: application/openmetrics-text",
     {200: "Prometheus text 0.0.4 or OpenMetrics 1.0.0", 401: "Problem", 403: "Problem",
      406: "Problem", 501: "Problem"}, False),
    ("actuator.refresh", "POST",
     "Re-read the configuration file and environment (superadmin)",
     {200: "RefreshResult", 401: "Problem", 403: "Problem", 422: "Problem", 501: "Problem"},
     True),
)  # fmt: skip


def route_specs(app: web.Application) -> list[RouteSpec]:
    """``RouteSpec``s describing the actuator routes ``setup_actuator`` registered on ``app``
    (path and handler read back from the router, so the document follows the library).

    Raises ``KeyError`` if ``setup_actuator`` has not run on ``app``.
    """
    specs: list[RouteSpec] = []
    for name, method, summary, responses, bearer in _DOCS:
        resource = app.router[name]
        route = next(r for r in resource if r.method == method)
        specs.append(
            RouteSpec(
                method,
                resource.canonical,
                route.handler,
                summary,
                responses,
                bearer=bearer,
                tag="actuator",
            )
        )
    return specs
