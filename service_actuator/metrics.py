"""Prometheus metrics: exposition, Accept negotiation, and the HTTP request middleware.

This is the only module of ``service_actuator`` that imports ``prometheus_client`` (the optional
``metrics`` extra). Without it the module still imports: :data:`METRICS_AVAILABLE` is False,
:meth:`MetricsExporter.render` raises :class:`~service_actuator.errors.MetricsUnavailable` (the
endpoint answers 501) and :func:`metrics_middleware` returns a pass-through middleware.

Formats served (Prometheus exposition formats,
https://prometheus.io/docs/instrumenting/exposition_formats/ and OpenMetrics 1.0):

* Prometheus text 0.0.4 -- ``text/plain; version=0.0.4; charset=utf-8`` (the default);
* OpenMetrics 1.0.0 -- ``application/openmetrics-text; version=1.0.0; charset=utf-8``.

prometheus-client's own ``choose_encoder`` ignores q-values and may answer text 1.0.0, so the
choice is made here by :func:`negotiate` (RFC 9110 section 12.5.1 semantics).
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from service_actuator.errors import MetricsUnavailable, ServiceActuatorError

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
    "OPENMETRICS_1_0_0",
    "SUPPORTED_FORMATS",
    "TEXT_0_0_4",
    "ExpositionFormat",
    "MetricsExporter",
    "NoopMetric",
    "counter",
    "histogram",
    "mark_process_dead",
    "metrics_middleware",
    "negotiate",
    "new_registry",
    "route_template",
]

MULTIPROC_ENV: Final = "PROMETHEUS_MULTIPROC_DIR"
"""Environment variable that switches prometheus-client to multiprocess mode."""

UNMATCHED: Final = "UNMATCHED"
"""The ``route`` label of requests that matched no route (404, 405)."""


@dataclass(frozen=True, slots=True)
class ExpositionFormat:
    """One exposition format this library can serve.

    Attributes:
        media_type: ``type/subtype``, lower case.
        version: the ``version`` media-type parameter it answers to.
        content_type: the full ``Content-Type`` of the response.
    """

    media_type: str
    version: str
    content_type: str

    @property
    def type(self) -> str:
        """The top-level type (``text`` or ``application``)."""
        return self.media_type.partition("/")[0]


TEXT_0_0_4: Final = ExpositionFormat(
    "text/plain", "0.0.4", "text/plain; version=0.0.4; charset=utf-8"
)
OPENMETRICS_1_0_0: Final = ExpositionFormat(
    "application/openmetrics-text",
    "1.0.0",
    "application/openmetrics-text; version=1.0.0; charset=utf-8",
)
SUPPORTED_FORMATS: Final = (TEXT_0_0_4, OPENMETRICS_1_0_0)
"""Served formats; on a tie (equal q, equal specificity) the earlier one wins."""


# --------------------------------------------------------------------------- negotiation


@dataclass(frozen=True, slots=True)
class _MediaRange:
    type: str
    subtype: str
    params: Mapping[str, str]
    q: float


def _split_outside_quotes(text: str, sep: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    quoted = escaped = False
    for char in text:
        if escaped:
            escaped = False
        elif char == "\\" and quoted:
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char == sep and not quoted:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts


def _parse_qvalue(value: str) -> float | None:
    # RFC 9110 section 12.4.2: qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
    head, _, frac = value.partition(".")
    if head not in {"0", "1"} or len(frac) > 3 or not (frac == "" or frac.isdigit()):
        return None
    q = float(f"{head}.{frac or '0'}")
    return q if q <= 1.0 else None


def _parse_accept(header: str) -> list[_MediaRange]:
    """Media ranges of an Accept header; malformed elements are dropped."""
    ranges: list[_MediaRange] = []
    for element in _split_outside_quotes(header, ","):
        pieces = _split_outside_quotes(element, ";")
        media_type, slash, subtype = pieces[0].strip().lower().partition("/")
        if not slash or not media_type or not subtype or (media_type == "*" and subtype != "*"):
            continue
        params: dict[str, str] = {}
        q: float | None = 1.0
        for piece in pieces[1:]:
            key, eq, value = piece.strip().partition("=")
            key, value = key.strip().lower(), value.strip()
            if not eq or not key:
                continue
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1].replace("\\", "")
            if key == "q":
                q = _parse_qvalue(value)
                break  # parameters after q are accept-ext, not media-type parameters
            params[key] = value
        if q is None:
            continue
        ranges.append(_MediaRange(media_type, subtype, params, q))
    return ranges


def _specificity(media_range: _MediaRange, fmt: ExpositionFormat) -> int | None:
    """How specifically ``media_range`` names ``fmt`` (higher wins), or None if it does not."""
    if media_range.type == "*":
        return 0
    if media_range.type != fmt.type:
        return None
    if media_range.subtype == "*":
        return 1
    if f"{media_range.type}/{media_range.subtype}" != fmt.media_type:
        return None
    version = media_range.params.get("version")
    if version is not None and version != fmt.version:
        return None
    charset = media_range.params.get("charset")
    if charset is not None and charset.lower() != "utf-8":
        return None
    # Other parameters (e.g. ``escaping``) do not exclude a match: the names we emit are
    # legacy-valid, which every escaping scheme leaves unchanged.
    return 3 if version is not None else 2


def negotiate(accept: str | None) -> ExpositionFormat | None:
    """Choose the exposition format for an ``Accept`` header, or None if none is acceptable.

    Each served format takes the q-value of the most specific media range that matches it
    (RFC 9110 section 12.5.1): ``type/subtype;version=V`` > ``type/subtype`` > ``type/*`` >
    ``*/*``. A range with a ``version`` parameter matches only that version, so
    ``text/plain;version=1.0.0`` does not match text 0.0.4. The format with the highest q > 0
    wins; ties go to the more specific match, then to text 0.0.4.

    A missing or blank header, and a header of which no element parses, mean ``*/*``.

    Args:
        accept: the raw ``Accept`` request header, or None.

    Returns:
        :data:`TEXT_0_0_4`, :data:`OPENMETRICS_1_0_0`, or None (answer 406).
    """
    if accept is None or not accept.strip():
        return TEXT_0_0_4
    ranges = _parse_accept(accept)
    if not ranges:
        return TEXT_0_0_4
    best: tuple[float, int, int] | None = None
    chosen: ExpositionFormat | None = None
    for preference, fmt in enumerate(SUPPORTED_FORMATS):
        matches = [(spec, r.q) for r in ranges if (spec := _specificity(r, fmt)) is not None]
        if not matches:
            continue
        top = max(spec for spec, _ in matches)
        q = max(q for spec, q in matches if spec == top)
        if q <= 0:
            continue
        key = (q, top, -preference)
        if best is None or key > best:
            best, chosen = key, fmt
    return chosen


# --------------------------------------------------------------------------- exposition


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
            self._registry = registry if registry is not None else prometheus_client.REGISTRY

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
    target = registry if registry is not None else prometheus_client.REGISTRY
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
    target = registry if registry is not None else prometheus_client.REGISTRY
    if buckets is None:
        return prometheus_client.Histogram(name, documentation, labelnames, registry=target)
    return prometheus_client.Histogram(
        name, documentation, labelnames, registry=target, buckets=buckets
    )


# --------------------------------------------------------------------------- HTTP middleware

_KNOWN_METHODS: Final = frozenset(
    {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT"}
)


def route_template(request: web.Request) -> str:
    """The matched route's template (``/users/{id}``), never the raw path; else ``UNMATCHED``."""
    resource = request.match_info.route.resource
    if resource is None:
        return UNMATCHED
    return resource.canonical


class _HttpMetrics:
    def __init__(self, registry: Any) -> None:
        self.requests = prometheus_client.Counter(
            "http_server_requests",
            "HTTP requests served, by method, route template and status.",
            ("method", "route", "status"),
            registry=registry,
        )
        self.duration = prometheus_client.Histogram(
            "http_server_request_duration_seconds",
            "HTTP request duration in seconds, by method and route template.",
            ("method", "route"),
            registry=registry,
        )


_HTTP_METRICS: weakref.WeakKeyDictionary[Any, _HttpMetrics] = weakref.WeakKeyDictionary()


def metrics_middleware(registry: Any = None) -> Middleware:
    """An aiohttp middleware recording HTTP server metrics into ``registry``.

    Records ``http_server_requests_total{method, route, status}`` (counter) and
    ``http_server_request_duration_seconds{method, route}`` (histogram, seconds). ``route`` is
    the route template (``request.match_info.route.resource.canonical``), ``UNMATCHED`` for
    404/405; non-standard methods are counted as ``OTHER``, so clients cannot inflate label
    cardinality. Handler exceptions count as their HTTP status (``HTTPException``) or 500.
    Requests cancelled by a client disconnect are not counted.

    Calling it again with the same registry reuses the same metric objects.

    Args:
        registry: a ``prometheus_client.CollectorRegistry``; default ``prometheus_client.REGISTRY``.

    Returns:
        A new-style aiohttp middleware; a pass-through one when prometheus-client is missing.
    """
    if not METRICS_AVAILABLE:

        @web.middleware
        async def passthrough(request: web.Request, handler: Handler) -> web.StreamResponse:
            return await handler(request)

        return passthrough

    target = registry if registry is not None else prometheus_client.REGISTRY
    metrics = _HTTP_METRICS.get(target)
    if metrics is None:
        metrics = _HTTP_METRICS[target] = _HttpMetrics(target)
    http = metrics

    @web.middleware
    async def record(request: web.Request, handler: Handler) -> web.StreamResponse:
        start = time.perf_counter()

        def observe(status: int) -> None:
            elapsed = time.perf_counter() - start
            method = request.method if request.method in _KNOWN_METHODS else "OTHER"
            route = route_template(request)
            http.requests.labels(method, route, str(status)).inc()
            http.duration.labels(method, route).observe(elapsed)

        try:
            response = await handler(request)
        except web.HTTPException as exc:
            observe(exc.status)
            raise
        except Exception:
            observe(500)
            raise
        # CancelledError (a client disconnect) is a BaseException: nothing is recorded.
        observe(response.status)
        return response

    return record
