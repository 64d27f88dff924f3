"""service_actuator -- Spring Boot Actuator-style endpoints, with an aiohttp adapter.

Health (overall, liveness, readiness), info, Prometheus metrics and configuration refresh;
see ``docs/adr/0006-service-actuator.md``. Typical wiring::

    from service_actuator import Actuator, ActuatorSettings, HealthCheck
    from service_actuator.aiohttp import metrics_middleware, setup_actuator

    actuator = Actuator(
        ActuatorSettings(show_details="when_authorized"),
        distribution="authsvc",
        readiness_indicators=[HealthCheck("database", db.ping)],
        authorizer=authorize,      # (request, action) -> "ok" | "unauthenticated" | "forbidden"
        reloader=reload_config,    # () -> RefreshResult, raises InvalidConfiguration
    )
    app = web.Application(middlewares=[metrics_middleware()])
    setup_actuator(app, actuator)

This package imports nothing from the service that uses it; prometheus-client (the ``metrics``
extra) is optional and imported only by ``service_actuator.metrics``. Only
``service_actuator.aiohttp`` imports a web framework, and this package face does not import it:
``import service_actuator`` (or any module but ``service_actuator.aiohttp``) loads no aiohttp.
Settings, health, info, access, responses, negotiation, metrics, the HTTP-metrics rules
(``http_metrics``) and the :class:`Actuator` itself (``core``) are neutral; the adapter
(``ACTUATOR_KEY``, ``setup_actuator``, ``metrics_middleware``, ``to_aiohttp``) is imported from
``service_actuator.aiohttp``.
"""

from service_actuator.access import Access, Action, Authorizer
from service_actuator.core import Actuator, RefreshResult, Reloader
from service_actuator.errors import (
    AccessDenied,
    AuthenticationRequired,
    DuplicateIndicator,
    InvalidConfiguration,
    InvalidSetting,
    MetricsUnavailable,
    ServiceActuatorError,
)
from service_actuator.health import (
    ComponentHealth,
    HealthCheck,
    HealthCheckResult,
    HealthIndicator,
    HealthReport,
    Status,
)
from service_actuator.http_metrics import HttpServerMetrics
from service_actuator.info import InfoContributor
from service_actuator.metrics import METRICS_AVAILABLE
from service_actuator.responses import ActuatorResponse, problem
from service_actuator.settings import ActuatorSettings

__all__ = [
    "METRICS_AVAILABLE",
    "Access",
    "AccessDenied",
    "Action",
    "Actuator",
    "ActuatorResponse",
    "ActuatorSettings",
    "AuthenticationRequired",
    "Authorizer",
    "ComponentHealth",
    "DuplicateIndicator",
    "HealthCheck",
    "HealthCheckResult",
    "HealthIndicator",
    "HealthReport",
    "HttpServerMetrics",
    "InfoContributor",
    "InvalidConfiguration",
    "InvalidSetting",
    "MetricsUnavailable",
    "RefreshResult",
    "Reloader",
    "ServiceActuatorError",
    "Status",
    "problem",
]
