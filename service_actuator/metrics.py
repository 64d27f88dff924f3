"""Prometheus metrics: exposition of a registry, multiprocess mode, and metric factories.

This is the only module of ``service_actuator`` that imports ``prometheus_client`` (the optional
``metrics`` extra). Without it the module still imports: :data:`METRICS_AVAILABLE` is False,
:meth:`MetricsExporter.render` raises :class:`~service_actuator.errors.MetricsUnavailable` (the
endpoint answers 501), the factories hand out :class:`NoopMetric` objects and
``service_actuator.aiohttp.metrics_middleware`` returns a pass-through middleware.

The formats (Prometheus text 0.0.4, OpenMetrics 1.0.0) and their negotiation live in
``service_actuator.negotiation``; no web framework is imported here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from service_actuator.errors import MetricsUnavailable, ServiceActuatorError
from service_actuator.negotiation import OPENMETRICS_1_0_0, TEXT_0_0_4, ExpositionFormat

try:
    import prometheus_client
    import prometheus_client.exposition
    import prometheus_client.multiprocess
    import prometheus_client.openmetrics.exposition
except ImportError:  # the `metrics` extra is not installed
    METRICS_AVAILABLE: bool = False
else:
    METRICS_AVAILABLE = True

__all__ = [
    "METRICS_AVAILABLE",
    "MULTIPROC_ENV",
    "MetricsExporter",
    "NoopMetric",
    "counter",
    "histogram",
    "mark_process_dead",
    "new_registry",
    "registry_or_default",
]

MULTIPROC_ENV: Final = "PROMETHEUS_MULTIPROC_DIR"
"""Environment variable that switches prometheus-client to multiprocess mode."""


class MetricsExporter:
    """Renders a prometheus-client registry in a negotiated exposition format.

    In multiprocess mode (``multiprocess_dir`` set, normally from ``PROMETHEUS_MULTIPROC_DIR``)
    it collects with ``prometheus_client.multiprocess.MultiProcessCollector`` into a fresh
    registry, aggregating every worker's metrics; the ``registry`` argument is then unused.

    Args:
        registry: a ``prometheus_client.CollectorRegistry``; default ``prometheus_client.REGISTRY``.
        multiprocess_dir: the multiprocess directory, or None for single-process mode.

    Raises:
        ServiceActuatorError: ``multiprocess_dir`` is set but is not an existing directory.
    """

    def __init__(self, registry: Any = None, *, multiprocess_dir: str | None = None) -> None:
        self.multiprocess_dir = multiprocess_dir or None
        self._registry: Any = None
        if not METRICS_AVAILABLE:
            return
        if self.multiprocess_dir is not None:
            fresh = prometheus_client.CollectorRegistry()
            try:
                prometheus_client.multiprocess.MultiProcessCollector(  # type: ignore[no-untyped-call]
                    fresh, path=self.multiprocess_dir
                )
            except ValueError as exc:
                raise ServiceActuatorError(f"{MULTIPROC_ENV}: {exc}") from exc
            self._registry = fresh
        else:
            self._registry = registry_or_default(registry)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str], registry: Any = None) -> MetricsExporter:
        """An exporter in multiprocess mode iff ``environ`` has ``PROMETHEUS_MULTIPROC_DIR``."""
        return cls(registry, multiprocess_dir=environ.get(MULTIPROC_ENV) or None)

    @property
    def available(self) -> bool:
        """Whether prometheus-client is installed."""
        return METRICS_AVAILABLE

    def render(self, fmt: ExpositionFormat) -> bytes:
        """The registry's samples in ``fmt`` (blocking: call it off the event loop).

        Raises:
            MetricsUnavailable: prometheus-client is not installed.
            ValueError: ``fmt`` is not one of :data:`SUPPORTED_FORMATS`.
        """
        if not METRICS_AVAILABLE:
            raise MetricsUnavailable("prometheus-client (the 'metrics' extra) is not installed")
        if fmt == TEXT_0_0_4:
            data: bytes = prometheus_client.exposition.generate_latest(self._registry)
            return data
        if fmt == OPENMETRICS_1_0_0:
            om = prometheus_client.openmetrics.exposition
            data = om.generate_latest(self._registry)  # type: ignore[no-untyped-call]
            return data
        raise ValueError(f"unsupported exposition format: {fmt!r}")


def mark_process_dead(pid: int, path: str | None = None) -> None:
    """Multiprocess mode: drop a dead worker's live gauges (call from the process manager).

    A no-op without prometheus-client. ``path`` defaults to ``PROMETHEUS_MULTIPROC_DIR``.
    """
    if METRICS_AVAILABLE:
        prometheus_client.multiprocess.mark_process_dead(pid, path)  # type: ignore[no-untyped-call]


# --------------------------------------------------------------------------- metric factories


def registry_or_default(registry: Any = None) -> Any:
    """``registry``, or prometheus-client's global ``REGISTRY`` when it is None.

    Returns:
        A ``prometheus_client.CollectorRegistry``; ``registry`` itself (None by default) when
        prometheus-client (the ``metrics`` extra) is not installed.
    """
    if registry is not None or not METRICS_AVAILABLE:
        return registry
    return prometheus_client.REGISTRY


class NoopMetric:
    """Stands in for a prometheus-client metric when the ``metrics`` extra is missing.

    Supports the calls services make on counters, histograms and gauges (``labels``, ``inc``,
    ``dec``, ``set``, ``observe``); each does nothing.
    """

    def labels(self, *values: str, **labels: str) -> NoopMetric:
        """This object again (any label values accepted)."""
        return self

    def inc(self, amount: float = 1) -> None:
        """Nothing."""

    def dec(self, amount: float = 1) -> None:
        """Nothing."""

    def set(self, value: float) -> None:
        """Nothing."""

    def observe(self, amount: float) -> None:
        """Nothing."""


def new_registry(*, process_collectors: bool = True) -> Any:
    """A fresh ``prometheus_client.CollectorRegistry`` for one service instance, or None.

    With ``process_collectors`` it also carries the process, platform and GC collectors that
    prometheus-client's global registry has by default (``process_*``, ``python_info``,
    ``python_gc_*``), so a service using its own registry still exposes them.

    Returns:
        The registry, or None when prometheus-client (the ``metrics`` extra) is not installed.
    """
    if not METRICS_AVAILABLE:
        return None
    registry = prometheus_client.CollectorRegistry()
    if process_collectors:
        prometheus_client.ProcessCollector(registry=registry)
        prometheus_client.PlatformCollector(registry=registry)
        prometheus_client.GCCollector(registry=registry)
    return registry


def counter(
    name: str, documentation: str, labelnames: tuple[str, ...] = (), registry: Any = None
) -> Any:
    """A ``prometheus_client.Counter`` (exposed as ``<name>_total``), or a :class:`NoopMetric`.

    Args:
        name: the metric name without the ``_total`` suffix, e.g. ``"authsvc_logins"``.
        documentation: the HELP text.
        labelnames: label names; keep their values to a small fixed set.
        registry: where to register it; default ``prometheus_client.REGISTRY``.

    Raises:
        ValueError: (prometheus-client) the name is already registered in ``registry``.
    """
    if not METRICS_AVAILABLE:
        return NoopMetric()
    target = registry_or_default(registry)
    return prometheus_client.Counter(name, documentation, labelnames, registry=target)


def histogram(
    name: str,
    documentation: str,
    labelnames: tuple[str, ...] = (),
    registry: Any = None,
    buckets: tuple[float, ...] | None = None,
) -> Any:
    """A ``prometheus_client.Histogram`` (seconds, by convention), or a :class:`NoopMetric`.

    ``buckets`` default to prometheus-client's (5 ms .. 10 s). Raises like :func:`counter`.
    """
    if not METRICS_AVAILABLE:
        return NoopMetric()
    target = registry_or_default(registry)
    if buckets is None:
        return prometheus_client.Histogram(name, documentation, labelnames, registry=target)
    return prometheus_client.Histogram(
        name, documentation, labelnames, registry=target, buckets=buckets
    )
