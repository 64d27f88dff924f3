"""Tracing with OpenTelemetry (design.md: entrypoints own the tracing middleware).

One span per HTTP request (``entrypoints.http.middlewares.tracing_middleware``, kind SERVER, named
``"<METHOD> <route template>"`` with ``http.request.method``, ``http.route`` and
``http.response.status_code``) and one span per use case (:func:`traced`, kind INTERNAL, named
``"<UseCase>"`` or ``"<Service>.<method>"``). The application layer knows nothing of this: the
container wraps the use-case objects.

**No secret ever reaches a span.** Span attributes are fixed names with values taken from the
route table, the method, the status and exception *class* names — never request bodies, headers,
arguments or exception messages (which could echo input).

Exporters (``[telemetry] exporter``, docs/reference/configuration.md):

* ``none`` (default): no SDK provider is built; spans go to the global OpenTelemetry provider,
  a no-op unless the process installed one (e.g. ``opentelemetry-instrument``).
* ``console``: an SDK provider printing finished spans as JSON on stdout.
* ``otlp``: an SDK provider exporting with OTLP/HTTP to ``telemetry.otlp_endpoint`` (empty: the
  exporter's default, ``$OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or ``http://localhost:4318``);
  needs the ``opentelemetry-exporter-otlp-proto-http`` package — without it start-up fails
  with a :class:`~entrypoints.config.ConfigError` naming it.

Telemetry settings apply at start; a refresh that changes ``telemetry`` builds the new provider
first (:meth:`Telemetry.provider_for`, which may refuse) and swaps it in only once the whole
refresh is accepted (:meth:`Telemetry.use`; ``entrypoints.config.refresh``).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import logging
import sys
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any, TypeVar, cast

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
from opentelemetry.trace import StatusCode

from entrypoints.config import ConfigError
from entrypoints.config.infrastructure import TelemetrySettings

log = logging.getLogger("authsvc.telemetry")

OTLP_MODULE = "opentelemetry.exporter.otlp.proto.http.trace_exporter"
OTLP_PACKAGE = "opentelemetry-exporter-otlp-proto-http"
INSTRUMENTATION = "authsvc"

T = TypeVar("T")


def _service_version() -> str:
    try:
        return version("authsvc")
    except PackageNotFoundError:
        return "0"


def build_exporter(settings: TelemetrySettings) -> SpanExporter | None:
    """The span exporter ``settings.exporter`` names; None for ``none``.

    Raises:
        ConfigError: ``otlp`` without the ``opentelemetry-exporter-otlp-proto-http`` package
            (key ``telemetry.exporter``).
    """
    if settings.exporter == "none":
        return None
    if settings.exporter == "console":
        # sys.stdout now, not the one bound as the SDK's default argument at its import.
        return ConsoleSpanExporter(service_name=settings.service_name, out=sys.stdout)
    try:
        module = importlib.import_module(OTLP_MODULE)
    except ImportError:
        raise ConfigError(
            "telemetry.exporter",
            f'"otlp" needs the {OTLP_PACKAGE} package (pip install {OTLP_PACKAGE}), '
            "which is not installed",
        ) from None
    exporter: SpanExporter = module.OTLPSpanExporter(endpoint=settings.otlp_endpoint or None)
    return exporter


class Telemetry:
    """The tracer in force. ``tracer`` is read per span, so :meth:`apply` takes effect for the
    next request.

    Args:
        provider: an SDK ``TracerProvider`` this object owns (shut down by :meth:`shutdown` or
            :meth:`apply`), or None to use the global provider (``exporter = "none"``).
    """

    def __init__(self, provider: TracerProvider | None = None) -> None:
        self._provider = provider
        self.tracer: trace.Tracer = self._tracer_of(provider)
        self.recording = self._records(provider)
        """False when spans go nowhere (``exporter = "none"`` and no global SDK provider): the
        middleware and use-case wrappers then skip span work entirely."""

    @staticmethod
    def _records(provider: TracerProvider | None) -> bool:
        if provider is not None:
            return True
        return not isinstance(
            trace.get_tracer_provider(), trace.ProxyTracerProvider | trace.NoOpTracerProvider
        )

    @staticmethod
    def _tracer_of(provider: TracerProvider | None) -> trace.Tracer:
        if provider is None:
            return trace.get_tracer(INSTRUMENTATION, _service_version())
        return provider.get_tracer(INSTRUMENTATION, _service_version())

    @staticmethod
    def provider_for(settings: TelemetrySettings, exporter: SpanExporter | None = None) -> Any:
        """An SDK provider for ``settings`` exporting with ``exporter`` (default: built from
        ``settings``), or None for ``exporter = "none"`` without an explicit exporter.

        Raises ``ConfigError`` like :func:`build_exporter`.
        """
        exporter = exporter if exporter is not None else build_exporter(settings)
        if exporter is None:
            return None
        resource = Resource.create(
            {"service.name": settings.service_name, "service.version": _service_version()}
        )
        provider = TracerProvider(resource=resource)
        provider.add_span_processor(BatchSpanProcessor(exporter))
        return provider

    @classmethod
    def from_settings(cls, settings: TelemetrySettings) -> Telemetry:
        """Telemetry per ``settings``; raises ``ConfigError`` (otlp without its package)."""
        return cls(cls.provider_for(settings))

    @classmethod
    def with_exporter(cls, exporter: SpanExporter, service_name: str = "authsvc") -> Telemetry:
        """Telemetry exporting every span to ``exporter`` synchronously (tests:
        ``InMemorySpanExporter``)."""
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        return cls(provider)

    def apply(self, settings: TelemetrySettings) -> None:
        """Put new telemetry settings in force: ``use(provider_for(settings))``. Raises
        ``ConfigError`` and changes nothing if they cannot be served."""
        self.use(self.provider_for(settings))

    def use(self, provider: TracerProvider | None) -> None:
        """Trace with ``provider`` (from :meth:`provider_for`; None: the global provider) from
        the next span on; the old owned provider is flushed and shut down (a failure there is
        logged, never raised: the swap has happened)."""
        old, self._provider = self._provider, provider
        self.tracer = self._tracer_of(provider)
        self.recording = self._records(provider)
        if old is not None:
            try:
                old.shutdown()
            except Exception:
                log.exception("the previous tracer provider failed to shut down")

    def shutdown(self) -> None:
        """Flush and stop the owned provider (at application shutdown); idempotent."""
        if self._provider is not None:
            provider, self._provider = self._provider, None
            self.recording = self._records(None)
            provider.shutdown()


# --------------------------------------------------------------------------- use-case spans


def _span_wrapper(telemetry: Telemetry, name: str, call: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(call)
    async def run(*args: Any, **kwargs: Any) -> Any:
        if not telemetry.recording:
            return await call(*args, **kwargs)
        with telemetry.tracer.start_as_current_span(
            name, record_exception=False, set_status_on_exception=False
        ) as span:
            try:
                return await call(*args, **kwargs)
            except Exception as exc:
                # The class only: messages may echo input, and input may be a secret.
                span.set_attribute("error.type", type(exc).__qualname__)
                span.set_status(StatusCode.ERROR)
                raise

    return run


class _Traced:
    """A proxy opening a span around every coroutine method of ``target`` and around
    ``target(...)`` when it is an async callable; other attributes pass through unchanged."""

    def __init__(self, target: Any, name: str, telemetry: Telemetry) -> None:
        self._target = target
        self._name = name
        self._telemetry = telemetry
        self._call = (
            _span_wrapper(telemetry, name, target)
            if inspect.iscoroutinefunction(getattr(target, "__call__", None))  # noqa: B004
            else None
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._call is None:
            return self._target(*args, **kwargs)
        return self._call(*args, **kwargs)

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self._target, attr)
        if not attr.startswith("_") and inspect.iscoroutinefunction(value):
            wrapped = _span_wrapper(self._telemetry, f"{self._name}.{attr}", value)
            setattr(self, attr, wrapped)  # cache: __getattr__ runs only on misses
            return wrapped
        return value

    def __repr__(self) -> str:
        return f"traced({self._target!r})"


def traced(target: T, name: str, telemetry: Telemetry) -> T:
    """``target`` with a span per use-case call (typed as ``target`` for the container).

    ``AuthService`` gets spans ``AuthService.login`` etc.; a callable use case such as
    ``ListUsers`` gets ``ListUsers``. The span has no attributes beyond ``error.type`` (the
    exception class) on failure: arguments are never recorded.
    """
    return cast(T, _Traced(target, name, telemetry))
