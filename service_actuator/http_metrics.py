"""HTTP server metrics, framework-free: labels, durations and the two Prometheus families.

What a web framework's middleware records per request, without the framework::

    http_server_requests_total{method, route, status}           counter
    http_server_request_duration_seconds{method, route}         histogram, seconds

A framework adapter (``service_actuator.aiohttp.metrics_middleware``) only reads the method, the
matched route template (None when nothing matched) and the final status off its own request and
response types, and calls :meth:`HttpServerMetrics.start` / :meth:`HttpServerMetrics.finish`.
Label rules (bounded cardinality, whatever clients send):

- ``method``: one of :data:`KNOWN_METHODS`, else ``OTHER``;
- ``route``: the route template (``/users/{id}``), never the raw path; :data:`UNMATCHED` when no
  route matched (404, 405);
- ``status``: the HTTP status code as a decimal string.

This module imports no web framework (an import-linter contract keeps it so); prometheus-client
is reached only through ``service_actuator.metrics`` and may be missing (then nothing is
recorded and :attr:`HttpServerMetrics.enabled` is False).
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from typing import Any, Final

from service_actuator.metrics import METRICS_AVAILABLE, counter, histogram, registry_or_default

__all__ = [
    "KNOWN_METHODS",
    "REQUESTS_METRIC",
    "REQUEST_DURATION_METRIC",
    "UNMATCHED",
    "HttpServerMetrics",
    "method_label",
    "route_label",
]

UNMATCHED: Final = "UNMATCHED"
"""The ``route`` label of requests that matched no route (404, 405)."""

KNOWN_METHODS: Final = frozenset(
    {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT"}
)
"""The request methods counted under their own name (RFC 9110 section 9 plus PATCH)."""

REQUESTS_METRIC: Final = "http_server_requests"
"""The counter's name (exposed as ``http_server_requests_total``)."""

REQUEST_DURATION_METRIC: Final = "http_server_request_duration_seconds"
"""The histogram's name (seconds)."""


def method_label(method: str) -> str:
    """``method`` if it is one of :data:`KNOWN_METHODS` (case-sensitive), else ``"OTHER"``."""
    return method if method in KNOWN_METHODS else "OTHER"


def route_label(template: str | None) -> str:
    """The route template given, or :data:`UNMATCHED` when it is None (no route matched)."""
    return UNMATCHED if template is None else template


class _Instruments:
    """The counter and the histogram registered once in one registry."""

    def __init__(self, registry: Any) -> None:
        self.requests = counter(
            REQUESTS_METRIC,
            "HTTP requests served, by method, route template and status.",
            ("method", "route", "status"),
            registry,
        )
        self.duration = histogram(
            REQUEST_DURATION_METRIC,
            "HTTP request duration in seconds, by method and route template.",
            ("method", "route"),
            registry,
        )


# One set of instruments per registry: prometheus-client refuses to register a name twice.
_INSTRUMENTS: weakref.WeakKeyDictionary[Any, _Instruments] = weakref.WeakKeyDictionary()


class HttpServerMetrics:
    """Records served HTTP requests into a prometheus-client registry.

    Several instances on one registry share the same metric objects (no "Duplicated timeseries"
    error). Each instance caches the labelled children it has used, by
    ``(method, route, status)``: a bounded set, looked up once each instead of per request.

    Args:
        registry: a ``prometheus_client.CollectorRegistry``; default ``prometheus_client.REGISTRY``.
        clock: a monotonic clock in seconds; default ``time.perf_counter``.
    """

    def __init__(
        self, registry: Any = None, *, clock: Callable[[], float] = time.perf_counter
    ) -> None:
        self._clock = clock
        self._instruments: _Instruments | None = None
        self._children: dict[tuple[str, str, int], tuple[Any, Any]] = {}
        if not METRICS_AVAILABLE:
            return
        target = registry_or_default(registry)
        instruments = _INSTRUMENTS.get(target)
        if instruments is None:
            instruments = _INSTRUMENTS[target] = _Instruments(target)
        self._instruments = instruments

    @property
    def enabled(self) -> bool:
        """Whether anything is recorded (False without prometheus-client)."""
        return self._instruments is not None

    def start(self) -> float:
        """The clock's reading now: pass it to :meth:`finish` when the response is known."""
        return self._clock()

    def finish(self, started: float, method: str, route: str | None, status: int) -> None:
        """Count one served request and observe its duration (clock now minus ``started``).

        Args:
            started: what :meth:`start` returned when the request came in.
            method: the request method as received; unknown ones are labelled ``OTHER``.
            route: the matched route template, or None when no route matched.
            status: the final HTTP status (an error's status, or 500 for a handler bug).
        """
        instruments = self._instruments
        if instruments is None:
            return
        elapsed = self._clock() - started
        key = (method_label(method), route_label(route), status)
        pair = self._children.get(key)
        if pair is None:
            pair = self._children[key] = (
                instruments.requests.labels(key[0], key[1], str(status)),
                instruments.duration.labels(key[0], key[1]),
            )
        pair[0].inc()
        pair[1].observe(elapsed)
