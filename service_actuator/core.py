"""The framework-neutral actuator: health, liveness, readiness, info, metrics and refresh.

Modelled on Spring Boot Actuator (``/actuator/health`` with groups ``liveness`` and
``readiness``, ``/actuator/info`` with its contributors, ``/actuator/prometheus``) and Spring
Cloud's ``/actuator/refresh``. Error bodies are RFC 9457 problem details.

:class:`Actuator` handlers return an :class:`~service_actuator.responses.ActuatorResponse`
(status, content type, headers, body bytes); ``service_actuator.aiohttp`` turns them into aiohttp
responses and mounts the routes. The request object a framework hands in is passed through,
untouched, to the injected :data:`~service_actuator.access.Authorizer`; the actuator itself never
looks inside it. This module imports no web framework.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from service_actuator import responses
from service_actuator.access import Access, Action, Authorizer, authorize
from service_actuator.errors import DuplicateIndicator, InvalidConfiguration
from service_actuator.health import HealthIndicator, HealthReport, Status, run_checks
from service_actuator.info import InfoContributor, assemble_info, static_info
from service_actuator.metrics import MetricsExporter
from service_actuator.negotiation import SUPPORTED_FORMATS, negotiate
from service_actuator.responses import ActuatorResponse, json_response
from service_actuator.settings import ActuatorSettings

__all__ = ["Actuator", "RefreshResult", "Reloader"]

log = logging.getLogger("service_actuator")


@dataclass(frozen=True, slots=True)
class RefreshResult:
    """What a configuration refresh changed (Spring Cloud's ``/actuator/refresh`` answer).

    Attributes:
        changed: configuration prefixes whose values changed and were applied
            (e.g. ``["actuator", "auth"]``).
        restart_required: prefixes that changed but take effect only after a restart
            (e.g. ``["server", "storage"]``).
    """

    changed: list[str] = field(default_factory=list)
    restart_required: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, list[str]]:
        """``{"changed": [...], "restart_required": [...]}``."""
        return {"changed": list(self.changed), "restart_required": list(self.restart_required)}


Reloader: TypeAlias = Callable[[], RefreshResult | Awaitable[RefreshResult]]
"""Re-reads the configuration, applies it (e.g. publishes ``ConfigChanged``) and reports.

Sync or async; a sync one runs on the event loop. Raises ``InvalidConfiguration`` (answered 422,
nothing changed) when the new configuration does not validate.
"""


class Actuator:
    """The actuator service: handlers ``health``, ``liveness``, ``readiness``, ``info``,
    ``metrics`` and ``refresh`` (docs/reference/operations.md; Spring Boot Actuator semantics).

    Every handler is ``async``, takes the framework's request object (only handed to the
    authorizer; may be None) and returns an :class:`ActuatorResponse`.

    Args:
        settings: an :class:`ActuatorSettings`, or a zero-argument callable returning the one in
            force (read once per request, so a swap applies to the next request); default
            ``ActuatorSettings()``. See also :meth:`apply_settings`.
        distribution: the installed distribution whose metadata gives ``info.app``
            (``{"name", "version"}``); None leaves ``app`` out.
        indicators: health indicators counted by ``/health`` only.
        readiness_indicators: health indicators counted by ``/health`` and ``/health/ready``.
        info_contributors: extra ``/info`` contributors, merged in order.
        authorizer: see :data:`Authorizer`; None authorizes nobody.
        reloader: see :data:`Reloader`; None makes ``/refresh`` answer 501.
        registry: the ``prometheus_client.CollectorRegistry`` to expose (default: the global
            ``REGISTRY``); replaced by a multiprocess collector when
            ``PROMETHEUS_MULTIPROC_DIR`` is set.
        git_info_file: a ``git.properties`` (Spring format) or ``*.json`` file for ``info.git``.
        environ: the environment, read once here (default ``os.environ``): ``GIT_COMMIT``,
            ``GIT_BRANCH``, ``GIT_COMMIT_TIME`` for ``info.git``; ``PROMETHEUS_MULTIPROC_DIR``.

    Raises:
        DuplicateIndicator: two indicators share a name.
        ServiceActuatorError: ``PROMETHEUS_MULTIPROC_DIR`` names no directory.
    """

    def __init__(
        self,
        settings: ActuatorSettings | Callable[[], ActuatorSettings] | None = None,
        *,
        distribution: str | None = None,
        indicators: Iterable[HealthIndicator] = (),
        readiness_indicators: Iterable[HealthIndicator] = (),
        info_contributors: Iterable[InfoContributor] = (),
        authorizer: Authorizer | None = None,
        reloader: Reloader | None = None,
        registry: Any = None,
        git_info_file: str | os.PathLike[str] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._settings_source: Callable[[], ActuatorSettings]
        if settings is None:
            self.apply_settings(ActuatorSettings())
        elif isinstance(settings, ActuatorSettings):
            self.apply_settings(settings)
        else:
            self._settings_source = settings
        self._indicators: dict[str, HealthIndicator] = {}
        self._readiness: set[str] = set()
        for indicator in indicators:
            self.add_indicator(indicator)
        for indicator in readiness_indicators:
            self.add_indicator(indicator, readiness=True)
        self._contributors: list[InfoContributor] = list(info_contributors)
        self._authorizer = authorizer
        self._reloader = reloader
        env = os.environ if environ is None else environ
        self._metrics = MetricsExporter.from_environ(env, registry)
        self._static_info = static_info(distribution, env, git_info_file)
        self._refresh_lock = asyncio.Lock()

    # -- configuration ---------------------------------------------------------------

    @property
    def settings(self) -> ActuatorSettings:
        """The settings in force now."""
        return self._settings_source()

    def apply_settings(self, settings: ActuatorSettings) -> None:
        """Use ``settings`` from the next request on (e.g. from a ConfigChanged subscriber).

        Raises:
            TypeError: ``settings`` is not an :class:`ActuatorSettings`.
        """
        if not isinstance(settings, ActuatorSettings):
            raise TypeError(f"expected ActuatorSettings, got {type(settings).__name__}")
        self._settings_source = lambda: settings

    def add_indicator(self, indicator: HealthIndicator, *, readiness: bool = False) -> None:
        """Register a health indicator; ``readiness=True`` also counts it for ``/health/ready``.

        Raises:
            DuplicateIndicator: an indicator with that ``name`` is registered.
        """
        name = indicator.name
        if name in self._indicators:
            raise DuplicateIndicator(f"a health indicator named {name!r} is already registered")
        self._indicators[name] = indicator
        if readiness:
            self._readiness.add(name)

    def add_info_contributor(self, contributor: InfoContributor) -> None:
        """Register an ``/info`` contributor (merged after the earlier ones)."""
        self._contributors.append(contributor)

    # -- programmatic API --------------------------------------------------------------

    async def check_health(self, *, readiness: bool = False) -> HealthReport:
        """Run the indicators (all, or the readiness ones) concurrently and aggregate.

        Sync checks run in worker threads. The whole run takes at most
        ``settings.indicator_timeout`` seconds: a check still running then is DOWN
        (``"timed out after <n> s"``) and is cancelled (a sync one's thread is abandoned).
        """
        selected = [
            indicator
            for name, indicator in self._indicators.items()
            if not readiness or name in self._readiness
        ]
        return await run_checks(selected, self.settings.indicator_timeout)

    async def collect_info(self) -> dict[str, Any]:
        """The info document: ``app``, ``git`` (when known), ``python``, then contributors."""
        return await assemble_info(self._static_info, self._contributors)

    async def reload(self) -> RefreshResult:
        """Run the reloader once; concurrent calls are serialised.

        Raises:
            InvalidConfiguration: from the reloader; nothing changed.
            RuntimeError: no reloader was given.
            TypeError: the reloader returned no :class:`RefreshResult`.
        """
        if self._reloader is None:
            raise RuntimeError("no reloader configured")
        async with self._refresh_lock:
            result = self._reloader()
            if inspect.isawaitable(result):
                result = await result
        if not isinstance(result, RefreshResult):
            raise TypeError(f"reloader returned {type(result).__name__}, not RefreshResult")
        return result

    # -- authorization -----------------------------------------------------------------

    async def _deny(self, request: Any, action: Action) -> ActuatorResponse | None:
        """None if allowed, else the 401/403 problem response."""
        access = await authorize(self._authorizer, request, action)
        if access is Access.OK:
            return None
        if access is Access.UNAUTHENTICATED:
            return responses.unauthenticated()
        if self._authorizer is None:
            return responses.forbidden("No authorizer is configured for the actuator.")
        return responses.forbidden()

    async def _may_see_details(self, request: Any) -> bool:
        try:
            return await authorize(self._authorizer, request, "health_details") is Access.OK
        except Exception:
            log.warning("authorizer failed for health details; hiding them", exc_info=True)
            return False

    # -- handlers ----------------------------------------------------------------------

    async def _health_response(self, request: Any, *, readiness: bool) -> ActuatorResponse:
        settings = self.settings
        if settings.details_depend_on_caller:
            report, authorized = await asyncio.gather(
                self.check_health(readiness=readiness), self._may_see_details(request)
            )
        else:
            report, authorized = await self.check_health(readiness=readiness), False
        components, details = settings.visibility(authorized)
        return json_response(
            report.http_status,
            report.to_dict(components=components, details=details),
            {"Cache-Control": "no-store"},
        )

    async def health(self, request: Any = None) -> ActuatorResponse:
        """GET /actuator/health: 200 UP / 503 DOWN over every indicator.

        Body ``{"status": "UP"|"DOWN", "components": {name: {"status", "details"}}}``, the
        components and details shown per ``show_components``/``show_details``.
        """
        return await self._health_response(request, readiness=False)

    async def readiness(self, request: Any = None) -> ActuatorResponse:
        """GET /actuator/health/ready: like :meth:`health` over the readiness indicators only."""
        return await self._health_response(request, readiness=True)

    async def liveness(self, request: Any = None) -> ActuatorResponse:
        """GET /actuator/health/live: always 200 ``{"status": "UP"}``; checks nothing."""
        return json_response(200, {"status": Status.UP.value}, {"Cache-Control": "no-store"})

    async def info(self, request: Any = None) -> ActuatorResponse:
        """GET /actuator/info: 200 with :meth:`collect_info`'s document."""
        return json_response(200, await self.collect_info())

    async def metrics(self, request: Any = None, accept: str | None = None) -> ActuatorResponse:
        """GET /actuator/metrics: the registry in the format ``accept`` negotiates.

        200 with Prometheus text 0.0.4 (default) or OpenMetrics 1.0.0; 406 ``not_acceptable``
        when the ``Accept`` header allows neither (RFC 9110 negotiation); 501
        ``metrics_unavailable`` without prometheus-client; 401/403 when ``metrics_require_auth``
        and the authorizer refuses.
        """
        vary = {"Vary": "Accept"}
        if self.settings.metrics_require_auth:
            denied = await self._deny(request, "metrics")
            if denied is not None:
                return denied
        if not self._metrics.available:
            return responses.metrics_unavailable()
        fmt = negotiate(accept)
        if fmt is None:
            return responses.not_acceptable((f.content_type for f in SUPPORTED_FORMATS), vary)
        body = await asyncio.to_thread(self._metrics.render, fmt)
        return ActuatorResponse(200, fmt.content_type, body, {**vary, "Cache-Control": "no-store"})

    async def refresh(self, request: Any = None) -> ActuatorResponse:
        """POST /actuator/refresh: re-read configuration through the reloader.

        Authorizer action ``"refresh"``: 401 ``invalid_token`` (with ``WWW-Authenticate``) or
        403 ``forbidden`` when refused. 200 ``{"changed": [...], "restart_required": [...]}``;
        422 ``invalid_configuration`` (with ``key`` and ``errors``) when the reloader raises
        ``InvalidConfiguration``; 501 ``refresh_unavailable`` without a reloader.
        """
        denied = await self._deny(request, "refresh")
        if denied is not None:
            return denied
        if self._reloader is None:
            return responses.refresh_unavailable()
        try:
            result = await self.reload()
        except InvalidConfiguration as exc:
            return responses.invalid_configuration(exc)
        return json_response(200, result.to_dict())
