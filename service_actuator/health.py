"""Health: the :class:`HealthIndicator` port, statuses, reports, and running the checks.

Spring Boot Actuator's model: each indicator reports a component ``UP`` or ``DOWN`` with details;
the aggregate is DOWN if any component is. :func:`run_checks` runs indicators concurrently under
one time limit and never raises: a failing, odd or slow check is a DOWN component.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, TypeAlias, runtime_checkable

__all__ = [
    "ComponentHealth",
    "HealthCheck",
    "HealthCheckResult",
    "HealthIndicator",
    "HealthReport",
    "Status",
    "run_checks",
]

log = logging.getLogger("service_actuator")

_ERROR_MESSAGE_LIMIT = 500

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


@dataclass(frozen=True, slots=True)
class HealthCheck:
    """A :class:`HealthIndicator` made of a name and a callable (sync or async)."""

    name: str
    check: Callable[[], HealthCheckResult | Awaitable[HealthCheckResult]]


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


async def run_checks(indicators: Iterable[HealthIndicator], time_limit: float) -> HealthReport:
    """Run ``indicators`` concurrently and aggregate their outcomes; never raises.

    Sync checks run in worker threads, async ones on the event loop. The whole run takes at
    most ``time_limit`` seconds: a check still running then is DOWN (``"timed out after <n> s"``)
    and is cancelled (a sync one's thread is abandoned). No indicators give an UP report with
    no components.
    """
    tasks = {
        indicator.name: asyncio.create_task(_run_check(indicator), name=f"health:{indicator.name}")
        for indicator in indicators
    }
    if not tasks:
        return HealthReport.of({})
    try:
        _, pending = await asyncio.wait(tasks.values(), timeout=time_limit)
    finally:
        for task in tasks.values():
            if not task.done():
                task.cancel()
                task.add_done_callback(_retrieve)
    components: dict[str, ComponentHealth] = {}
    for name, task in tasks.items():
        if task in pending:
            log.warning("health indicator %r timed out after %g s", name, time_limit)
            components[name] = ComponentHealth(
                Status.DOWN, {"error": f"timed out after {time_limit:g} s"}
            )
        elif task.cancelled():
            components[name] = ComponentHealth(Status.DOWN, {"error": "check was cancelled"})
        else:
            components[name] = task.result()
    return HealthReport.of(components)
