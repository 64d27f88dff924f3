"""The framework-neutral actuator: health, liveness, readiness, info, metrics and refresh.

Modelled on Spring Boot Actuator (``/actuator/health`` with groups ``liveness`` and
``readiness``, ``/actuator/info`` with its contributors, ``/actuator/prometheus``) and Spring
Cloud's ``/actuator/refresh``. Error bodies are RFC 9457 problem details.

:class:`Actuator` handlers return an :class:`ActuatorResponse` (status, content type, headers,
body bytes); ``service_actuator.aiohttp`` turns them into aiohttp responses and mounts the routes.
The request object a framework hands in is passed through, untouched, to the injected
:data:`Authorizer`; the actuator itself never looks inside it.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
import logging
import math
import os
import platform
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from http import HTTPStatus
from importlib import metadata
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, TypeAlias, cast, runtime_checkable

from service_actuator.errors import (
    AccessDenied,
    AuthenticationRequired,
    DuplicateIndicator,
    InvalidConfiguration,
    InvalidSetting,
)
from service_actuator.metrics import SUPPORTED_FORMATS, MetricsExporter, negotiate

__all__ = [
    "Access",
    "Action",
    "Actuator",
    "ActuatorResponse",
    "ActuatorSettings",
    "Authorizer",
    "ComponentHealth",
    "HealthCheck",
    "HealthCheckResult",
    "HealthIndicator",
    "HealthReport",
    "InfoContributor",
    "RefreshResult",
    "Reloader",
    "Status",
    "problem",
]

log = logging.getLogger("service_actuator")

JSON_TYPE = "application/json"
PROBLEM_TYPE = "application/problem+json"
_ERROR_MESSAGE_LIMIT = 500

# --------------------------------------------------------------------------- settings

ShowMode: TypeAlias = Literal["never", "when_authorized", "always"]
_SHOW_MODES: tuple[str, ...] = ("never", "when_authorized", "always")


@dataclass(frozen=True, slots=True)
class ActuatorSettings:
    """Settings of the actuator; configuration prefix ``actuator`` (``[actuator]`` in TOML).

    Attributes:
        show_details: who sees each component's ``details`` in health responses: ``"never"``,
            ``"when_authorized"`` (the :data:`Authorizer` allows action ``"health_details"``;
            the default) or ``"always"`` (Spring's ``management.endpoint.health.show-details``).
        show_components: who sees the ``components`` map at all; None (the default) means the
            same as ``show_details``, as in Spring. With ``never`` the body is ``{"status"}``.
        indicator_timeout: seconds one health check may take before it counts as DOWN (> 0).
        metrics_require_auth: whether ``/metrics`` asks the :data:`Authorizer` (action
            ``"metrics"``) first.

    Raises:
        InvalidSetting: (an ``InvalidConfiguration``) a field has a bad value; ``field`` and
            ``key`` (``"actuator.<field>"``) name it.
    """

    prefix: ClassVar[str] = "actuator"

    show_details: ShowMode = "when_authorized"
    show_components: ShowMode | None = None
    indicator_timeout: float = 2.0
    metrics_require_auth: bool = False

    def __post_init__(self) -> None:
        if self.show_details not in _SHOW_MODES:
            raise InvalidSetting(
                "show_details",
                f"must be one of {', '.join(_SHOW_MODES)}, not {self.show_details!r}",
            )
        if self.show_components is not None and self.show_components not in _SHOW_MODES:
            raise InvalidSetting(
                "show_components",
                f"must be one of {', '.join(_SHOW_MODES)} or None, not {self.show_components!r}",
            )
        timeout = self.indicator_timeout
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not math.isfinite(timeout)
            or timeout <= 0
        ):
            raise InvalidSetting(
                "indicator_timeout", f"must be a positive number of seconds, not {timeout!r}"
            )
        object.__setattr__(self, "indicator_timeout", float(timeout))
        if not isinstance(self.metrics_require_auth, bool):
            raise InvalidSetting(
                "metrics_require_auth", f"must be true or false, not {self.metrics_require_auth!r}"
            )

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> ActuatorSettings:
        """Settings from a configuration table (e.g. TOML ``[actuator]``); missing keys default.

        Raises:
            InvalidConfiguration: an unknown key (``key`` = ``"actuator.<name>"``).
            InvalidSetting: a bad value.
        """
        known = {f.name for f in fields(cls)}
        for key in data:
            if key not in known:
                raise InvalidConfiguration(f"{cls.prefix}.{key}", "unknown key")
        return cls(**data)

    @property
    def effective_show_components(self) -> ShowMode:
        """``show_components``, or ``show_details`` when it is None."""
        return self.show_components if self.show_components is not None else self.show_details


# --------------------------------------------------------------------------- protocols

HealthCheckResult: TypeAlias = Mapping[str, Any] | bool | None
"""What ``check()`` returns: True/None (UP), False (DOWN), or a dict with optional ``"status"``
(``"UP"``/``"DOWN"``, default UP) plus details."""


@runtime_checkable
class HealthIndicator(Protocol):
    """A health check (Spring's ``HealthIndicator``).

    ``check()`` may be sync (run in a worker thread via ``asyncio.to_thread``) or ``async``
    (run on the event loop, so it must not block). It returns:

    * ``True`` or ``None`` -- UP, no details;
    * ``False`` -- DOWN, ``details = {"error": "check returned False"}``;
    * a mapping -- ``"status"`` (``"UP"``/``"DOWN"`` or a bool; default UP) and details: every
      other key, or the mapping under a lone ``"details"`` key.

    Raising, or running longer than ``ActuatorSettings.indicator_timeout`` seconds, is DOWN with
    ``details = {"error": "<exception class>: <message>"}`` / ``"timed out after <n> s"``.
    """

    @property
    def name(self) -> str:
        """The component name in the health document (unique per actuator)."""
        ...

    def check(self) -> HealthCheckResult | Awaitable[HealthCheckResult]:
        """Probe the dependency; see the class docstring for the result."""
        ...


@runtime_checkable
class InfoContributor(Protocol):
    """Adds to ``/info`` (Spring's ``InfoContributor``); the result is deep-merged into it.

    ``contribute()`` may be sync or async; it runs on the event loop, so keep it cheap. A
    contributor that raises or returns a non-mapping is logged and skipped.
    """

    def contribute(self) -> Mapping[str, Any] | Awaitable[Mapping[str, Any]]:
        """A mapping to merge into the info document."""
        ...


@dataclass(frozen=True, slots=True)
class HealthCheck:
    """A :class:`HealthIndicator` made of a name and a callable (sync or async)."""

    name: str
    check: Callable[[], HealthCheckResult | Awaitable[HealthCheckResult]]


class Access(StrEnum):
    """An :data:`Authorizer`'s verdict; plain strings ``"ok"`` etc. are accepted too."""

    OK = "ok"
    UNAUTHENTICATED = "unauthenticated"  # 401 invalid_token
    FORBIDDEN = "forbidden"  # 403 forbidden


Action: TypeAlias = Literal["health_details", "metrics", "refresh"]
"""What the caller wants: see health details, read metrics (when required), refresh config."""

AuthorizerResult: TypeAlias = Access | Literal["ok", "unauthenticated", "forbidden"] | bool

Authorizer: TypeAlias = Callable[[Any, Action], AuthorizerResult | Awaitable[AuthorizerResult]]
"""``authorizer(request, action)``, sync or async, decides whether the caller may do ``action``.

Returns an :class:`Access` (or its string), or a bool: True is ``ok``, False is
``unauthenticated``. It may instead raise ``AuthenticationRequired`` (401) or ``AccessDenied``
(403). For ``"health_details"`` anything but ``ok`` (including any exception) just hides details.
Without an authorizer nobody is authorized: ``when_authorized`` shows nothing and
``/refresh`` answers 403.
"""


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


# --------------------------------------------------------------------------- responses


@dataclass(frozen=True, slots=True)
class ActuatorResponse:
    """A framework-neutral HTTP response.

    Attributes:
        status: HTTP status code.
        content_type: the full ``Content-Type`` header value.
        body: the encoded body.
        headers: further headers.
    """

    status: int
    content_type: str
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)

    def json(self) -> Any:
        """The body decoded as JSON."""
        return json.loads(self.body)


def _dumps(document: Any) -> bytes:
    return json.dumps(document, ensure_ascii=False, default=str).encode()


def _json_response(
    status: int, document: Any, headers: Mapping[str, str] | None = None
) -> ActuatorResponse:
    return ActuatorResponse(status, JSON_TYPE, _dumps(document), dict(headers or {}))


def problem(
    status: int,
    code: str,
    detail: str,
    *,
    title: str | None = None,
    type_: str = "about:blank",
    headers: Mapping[str, str] | None = None,
    **extensions: Any,
) -> ActuatorResponse:
    """An RFC 9457 problem-details response, ``Content-Type: application/problem+json``.

    Body: ``{"type", "title", "status", "detail", "code", **extensions}``; ``title`` defaults to
    the status phrase.
    """
    document: dict[str, Any] = {
        "type": type_,
        "title": title if title is not None else HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
        "code": code,
        **extensions,
    }
    return ActuatorResponse(status, PROBLEM_TYPE, _dumps(document), dict(headers or {}))


def _unauthenticated() -> ActuatorResponse:
    return problem(
        401,
        "invalid_token",
        "A valid bearer token is required.",
        headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
    )


def _forbidden(detail: str = "The caller may not perform this operation.") -> ActuatorResponse:
    return problem(403, "forbidden", detail)


# --------------------------------------------------------------------------- health


class Status(StrEnum):
    """Health status (the contract knows only these two)."""

    UP = "UP"
    DOWN = "DOWN"


@dataclass(frozen=True, slots=True)
class ComponentHealth:
    """One indicator's outcome: ``status`` and ``details`` (JSON-serialisable mapping)."""

    status: Status
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class HealthReport:
    """The aggregate: DOWN if any component is DOWN; UP with no components."""

    status: Status
    components: Mapping[str, ComponentHealth]

    @classmethod
    def of(cls, components: Mapping[str, ComponentHealth]) -> HealthReport:
        """Aggregate ``components``."""
        down = any(c.status is Status.DOWN for c in components.values())
        return cls(Status.DOWN if down else Status.UP, components)

    @property
    def http_status(self) -> int:
        """200 when UP, 503 when DOWN."""
        return 200 if self.status is Status.UP else 503

    def to_dict(self, *, components: bool, details: bool) -> dict[str, Any]:
        """``{"status"}``, plus ``"components": {name: {"status"[, "details"]}}`` if asked."""
        document: dict[str, Any] = {"status": self.status.value}
        if components:
            shown: dict[str, Any] = {}
            for name, component in self.components.items():
                entry: dict[str, Any] = {"status": component.status.value}
                if details:
                    entry["details"] = dict(component.details)
                shown[name] = entry
            document["components"] = shown
        return document


def _describe(exc: BaseException) -> str:
    cls = type(exc)
    name = (
        cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    )
    message = str(exc)
    if len(message) > _ERROR_MESSAGE_LIMIT:
        message = message[:_ERROR_MESSAGE_LIMIT] + "..."
    return f"{name}: {message}" if message else name


def _interpret(result: object) -> ComponentHealth:
    if result is True or result is None:
        return ComponentHealth(Status.UP)
    if result is False:
        return ComponentHealth(Status.DOWN, {"error": "check returned False"})
    if isinstance(result, Mapping):
        raw = result.get("status", Status.UP)
        details: dict[str, Any] = {k: v for k, v in result.items() if k != "status"}
        if set(details) == {"details"} and isinstance(details["details"], Mapping):
            details = dict(details["details"])
        if isinstance(raw, bool):
            return ComponentHealth(Status.UP if raw else Status.DOWN, details)
        if isinstance(raw, str) and raw.upper() in Status.__members__:
            return ComponentHealth(Status(raw.upper()), details)
        return ComponentHealth(
            Status.DOWN, {**details, "error": f"check returned an unknown status {raw!r}"}
        )
    return ComponentHealth(
        Status.DOWN, {"error": f"check returned an unsupported {type(result).__name__}"}
    )


async def _run_check(indicator: HealthIndicator) -> ComponentHealth:
    check = indicator.check
    try:
        if inspect.iscoroutinefunction(check):
            result = await check()
        else:
            result = await asyncio.to_thread(check)
            if inspect.isawaitable(result):
                result = await result
    except Exception as exc:
        log.warning("health indicator %r is DOWN", indicator.name, exc_info=True)
        return ComponentHealth(Status.DOWN, {"error": _describe(exc)})
    health = _interpret(result)
    if health.status is Status.DOWN:
        log.warning("health indicator %r is DOWN: %s", indicator.name, dict(health.details))
    return health


def _retrieve(task: asyncio.Task[Any]) -> None:
    # A done-callback for abandoned checks: fetch the outcome so asyncio logs no
    # "exception was never retrieved".
    if not task.cancelled():
        task.exception()


# --------------------------------------------------------------------------- info


def _deep_merge(target: dict[str, Any], extra: Mapping[str, Any]) -> None:
    for key, value in extra.items():
        current = target.get(key)
        if isinstance(current, dict) and isinstance(value, Mapping):
            _deep_merge(current, value)
        else:
            target[key] = copy.deepcopy(dict(value)) if isinstance(value, Mapping) else value


def _app_info(distribution: str) -> dict[str, Any]:
    try:
        meta = metadata.metadata(distribution)
    except metadata.PackageNotFoundError:
        log.warning("distribution %r is not installed; /info shows no version", distribution)
        return {"name": distribution, "version": "unknown"}
    return {"name": meta["Name"] or distribution, "version": meta["Version"] or "unknown"}


_GIT_ENV = {"GIT_BRANCH": ("branch",), "GIT_COMMIT": ("commit", "id")}
_GIT_PROPERTIES = {
    "git.branch": ("branch",),
    "git.commit.id": ("commit", "id"),
    "git.commit.id.full": ("commit", "id"),
    "git.commit.time": ("commit", "time"),
}


def _put(target: dict[str, Any], path: tuple[str, ...], value: str) -> None:
    for part in path[:-1]:
        target = target.setdefault(part, {})
    target[path[-1]] = value


def _git_info(
    environ: Mapping[str, str], git_file: str | os.PathLike[str] | None
) -> dict[str, Any]:
    git: dict[str, Any] = {}
    if git_file is not None:
        path = Path(git_file)
        try:
            text = path.read_text(encoding="utf-8")
            if path.suffix == ".json":
                loaded = json.loads(text)
                if isinstance(loaded, dict):
                    git = loaded
            else:  # Spring's git.properties
                for line in text.splitlines():
                    key, sep, value = line.partition("=")
                    if sep and key.strip() in _GIT_PROPERTIES:
                        _put(git, _GIT_PROPERTIES[key.strip()], value.strip())
        except (OSError, ValueError):
            log.warning("cannot read git info from %s", path, exc_info=True)
    for variable, path_in_doc in (*_GIT_ENV.items(), ("GIT_COMMIT_TIME", ("commit", "time"))):
        if environ.get(variable):
            _put(git, path_in_doc, environ[variable])
    return git


# --------------------------------------------------------------------------- the actuator


class Actuator:
    """The actuator service: handlers ``health``, ``liveness``, ``readiness``, ``info``,
    ``metrics`` and ``refresh`` (contract section 4; Spring Boot Actuator semantics).

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
        self._static_info: dict[str, Any] = {}
        if distribution is not None:
            self._static_info["app"] = _app_info(distribution)
        git = _git_info(env, git_info_file)
        if git:
            self._static_info["git"] = git
        self._static_info["python"] = {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
        }
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
        timeout = self.settings.indicator_timeout
        selected = [
            indicator
            for name, indicator in self._indicators.items()
            if not readiness or name in self._readiness
        ]
        tasks = {
            indicator.name: asyncio.create_task(
                _run_check(indicator), name=f"health:{indicator.name}"
            )
            for indicator in selected
        }
        if not tasks:
            return HealthReport.of({})
        try:
            _, pending = await asyncio.wait(tasks.values(), timeout=timeout)
        finally:
            for task in tasks.values():
                if not task.done():
                    task.cancel()
                    task.add_done_callback(_retrieve)
        components: dict[str, ComponentHealth] = {}
        for name, task in tasks.items():
            if task in pending:
                log.warning("health indicator %r timed out after %g s", name, timeout)
                components[name] = ComponentHealth(
                    Status.DOWN, {"error": f"timed out after {timeout:g} s"}
                )
            elif task.cancelled():
                components[name] = ComponentHealth(Status.DOWN, {"error": "check was cancelled"})
            else:
                components[name] = task.result()
        return HealthReport.of(components)

    async def collect_info(self) -> dict[str, Any]:
        """The info document: ``app``, ``git`` (when known), ``python``, then contributors."""
        document = copy.deepcopy(self._static_info)
        for contributor in self._contributors:
            try:
                contributed = contributor.contribute()
                if inspect.isawaitable(contributed):
                    contributed = await contributed
            except Exception:
                log.warning("info contributor %r failed; skipped", contributor, exc_info=True)
                continue
            if not isinstance(contributed, Mapping):
                log.warning("info contributor %r returned no mapping; skipped", contributor)
                continue
            _deep_merge(document, contributed)
        return document

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

    async def _authorize(self, request: Any, action: Action) -> Access:
        if self._authorizer is None:
            return Access.FORBIDDEN
        try:
            verdict = self._authorizer(request, action)
            if inspect.isawaitable(verdict):
                verdict = await verdict
        except AuthenticationRequired:
            return Access.UNAUTHENTICATED
        except AccessDenied:
            return Access.FORBIDDEN
        if verdict is True:
            return Access.OK
        if verdict is False:
            return Access.UNAUTHENTICATED
        try:
            return Access(cast(str, verdict))
        except ValueError:
            raise TypeError(f"authorizer returned {verdict!r}") from None

    async def _deny(self, request: Any, action: Action) -> ActuatorResponse | None:
        """None if allowed, else the 401/403 problem response."""
        access = await self._authorize(request, action)
        if access is Access.OK:
            return None
        if access is Access.UNAUTHENTICATED:
            return _unauthenticated()
        if self._authorizer is None:
            return _forbidden("No authorizer is configured for the actuator.")
        return _forbidden()

    async def _may_see_details(self, request: Any) -> bool:
        try:
            return await self._authorize(request, "health_details") is Access.OK
        except Exception:
            log.warning("authorizer failed for health details; hiding them", exc_info=True)
            return False

    # -- handlers ----------------------------------------------------------------------

    async def _health_response(self, request: Any, *, readiness: bool) -> ActuatorResponse:
        settings = self.settings
        modes = {settings.show_details, settings.effective_show_components}
        if "when_authorized" in modes:
            report, authorized = await asyncio.gather(
                self.check_health(readiness=readiness), self._may_see_details(request)
            )
        else:
            report, authorized = await self.check_health(readiness=readiness), False

        def shown(mode: ShowMode) -> bool:
            return mode == "always" or (mode == "when_authorized" and authorized)

        components = shown(settings.effective_show_components)
        details = components and shown(settings.show_details)
        return _json_response(
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
        return _json_response(200, {"status": Status.UP.value}, {"Cache-Control": "no-store"})

    async def info(self, request: Any = None) -> ActuatorResponse:
        """GET /actuator/info: 200 with :meth:`collect_info`'s document."""
        return _json_response(200, await self.collect_info())

    async def metrics(self, request: Any = None, accept: str | None = None) -> ActuatorResponse:
        """GET /actuator/metrics: the registry in the format ``accept`` negotiates.

        200 with Prometheus text 0.0.4 (default) or OpenMetrics 1.0.0; 406 ``not_acceptable``
        when the ``Accept`` header allows neither; 501 ``metrics_unavailable`` without
        prometheus-client; 401/403 when ``metrics_require_auth`` and the authorizer refuses.
        """
        vary = {"Vary": "Accept"}
        if self.settings.metrics_require_auth:
            denied = await self._deny(request, "metrics")
            if denied is not None:
                return denied
        if not self._metrics.available:
            return problem(
                501,
                "metrics_unavailable",
                "Metrics need prometheus-client: install the 'metrics' extra.",
            )
        fmt = negotiate(accept)
        if fmt is None:
            supported = ", ".join(f.content_type for f in SUPPORTED_FORMATS)
            return problem(
                406,
                "not_acceptable",
                f"The Accept header allows no available format; available: {supported}.",
                headers=vary,
            )
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
            return problem(501, "refresh_unavailable", "No configuration reloader is configured.")
        try:
            result = await self.reload()
        except InvalidConfiguration as exc:
            return problem(
                422,
                "invalid_configuration",
                f"Invalid configuration {exc.key}: {exc.message}. Nothing was changed.",
                key=exc.key,
                errors=[{"field": exc.key, "message": exc.message}],
            )
        return _json_response(200, result.to_dict())
