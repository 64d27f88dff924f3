"""``service_actuator.metrics`` factories: ``new_registry``, ``counter``, ``histogram``."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

from service_actuator.metrics import NoopMetric, counter, histogram, new_registry


def test_new_registry_has_process_collectors() -> None:
    registry = new_registry()
    assert isinstance(registry, CollectorRegistry)
    names = {family.name for family in registry.collect()}
    assert "python_info" in names
    assert {family.name for family in new_registry(process_collectors=False).collect()} == set()


def test_counter_and_histogram_register_in_the_registry() -> None:
    registry = CollectorRegistry()
    hits = counter("hits", "Hits.", ("kind",), registry)
    latency = histogram("latency_seconds", "Latency.", (), registry, buckets=(0.1, 1.0))
    assert isinstance(hits, Counter) and isinstance(latency, Histogram)
    hits.labels("a").inc()
    latency.observe(0.5)
    assert registry.get_sample_value("hits_total", {"kind": "a"}) == 1
    assert registry.get_sample_value("latency_seconds_bucket", {"le": "1.0"}) == 1


def test_noop_metric_accepts_every_call() -> None:
    noop = NoopMetric()
    noop.labels("x", y="z").inc()
    noop.labels().observe(1.0)
    noop.set(3)
    noop.dec()
