"""service_actuator -- Spring Boot Actuator-style endpoints for any aiohttp service.

Health (overall, liveness, readiness), info, Prometheus metrics and configuration refresh;
see ``docs/adr/0006-service-actuator.md``. Typical wiring::

    from service_actuator import Actuator, ActuatorSettings, HealthCheck, setup_actuator
    from service_actuator.metrics import metrics_middleware

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
extra) is optional and imported only by ``service_actuator.metrics``.
"""

from service_actuator.aiohttp import ACTUATOR_KEY, setup_actuator, to_aiohttp
from service_actuator.core import (
    Access,
    Action,
    Actuator,
    ActuatorResponse,
    ActuatorSettings,
    Authorizer,
    ComponentHealth,
    HealthCheck,
    HealthCheckResult,
    HealthIndicator,
    HealthReport,
    InfoContributor,
    RefreshResult,
    Reloader,
    Status,
    problem,
)
from service_actuator.errors import (
    AccessDenied,
    AuthenticationRequired,
    DuplicateIndicator,
    InvalidConfiguration,
    InvalidSetting,
    MetricsUnavailable,
    ServiceActuatorError,
)
from service_actuator.metrics import METRICS_AVAILABLE, metrics_middleware

__all__ = [
    "ACTUATOR_KEY",
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
    "InfoContributor",
    "InvalidConfiguration",
    "InvalidSetting",
    "MetricsUnavailable",
    "RefreshResult",
    "Reloader",
    "ServiceActuatorError",
    "Status",
    "metrics_middleware",
    "problem",
    "setup_actuator",
    "to_aiohttp",
]
