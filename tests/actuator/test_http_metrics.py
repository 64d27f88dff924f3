"""HttpServerMetrics, without a web framework: labels, durations, shared instruments."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from service_actuator.http_metrics import (
    UNMATCHED,
    HttpServerMetrics,
    method_label,
    route_label,
)

from .test_metrics import samples


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_labels_are_bounded() -> None:
    assert method_label("GET") == "GET"
    assert method_label("PATCH") == "PATCH"
    assert method_label("PURGE") == "OTHER"
    assert method_label("get") == "OTHER"
    assert route_label("/users/{id}") == "/users/{id}"
    assert route_label(None) == UNMATCHED == "UNMATCHED"


def test_finish_counts_and_observes_the_elapsed_seconds() -> None:
    registry = CollectorRegistry()
    clock = FakeClock()
    http = HttpServerMetrics(registry, clock=clock)
    assert http.enabled

    started = http.start()
    clock.now += 0.25
    http.finish(started, "GET", "/users/{id}", 200)
    started = http.start()
    clock.now += 0.5
    http.finish(started, "GET", "/users/{id}", 200)
    http.finish(http.start(), "BREW", None, 405)

    assert samples(registry, "http_server_requests_total") == {
        (("method", "GET"), ("route", "/users/{id}"), ("status", "200")): 2.0,
        (("method", "OTHER"), ("route", "UNMATCHED"), ("status", "405")): 1.0,
    }
    durations = samples(registry, "http_server_request_duration_seconds_sum")
    assert durations[(("method", "GET"), ("route", "/users/{id}"))] == 0.75
    assert durations[(("method", "OTHER"), ("route", "UNMATCHED"))] == 0.0


def test_two_recorders_on_one_registry_share_the_families() -> None:
    registry = CollectorRegistry()
    first = HttpServerMetrics(registry)
    second = HttpServerMetrics(registry)  # no "Duplicated timeseries" error
    first.finish(first.start(), "POST", "/login", 401)
    second.finish(second.start(), "POST", "/login", 401)
    assert samples(registry, "http_server_requests_total") == {
        (("method", "POST"), ("route", "/login"), ("status", "401")): 2.0,
    }
