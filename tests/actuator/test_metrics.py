"""/actuator/metrics bodies, the HTTP metrics middleware, multiprocess mode, promtool."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from prometheus_client import CollectorRegistry, Counter
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as parse_openmetrics,
)
from prometheus_client.parser import text_string_to_metric_families

from service_actuator import Actuator, ActuatorSettings, ServiceActuatorError
from service_actuator.aiohttp import metrics_middleware
from service_actuator.metrics import MetricsExporter
from tests.actuator.fakes import ADMIN, VIEWER, bearer_authorizer


def samples(registry: CollectorRegistry, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {
        tuple(sorted(s.labels.items())): s.value
        for family in registry.collect()
        for s in family.samples
        if s.name == name
    }


async def test_text_body_parses(actuator_client: Any, registry: CollectorRegistry) -> None:
    logins = Counter("logins", "Logins by outcome.", ["outcome"], registry=registry)
    logins.labels("success").inc(3)
    client = await actuator_client()
    await client.get("/actuator/health/live")
    response = await client.get("/actuator/metrics")
    assert response.status == 200
    text = await response.text()
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert families["logins"].type == "counter"
    assert any(
        s.name == "logins_total" and s.labels == {"outcome": "success"} and s.value == 3
        for s in families["logins"].samples
    )
    assert "http_server_request_duration_seconds" in families
    assert families["http_server_request_duration_seconds"].type == "histogram"


async def test_openmetrics_body_parses(actuator_client: Any, registry: CollectorRegistry) -> None:
    Counter("logins", "Logins by outcome.", ["outcome"], registry=registry).labels("fail").inc()
    client = await actuator_client()
    response = await client.get(
        "/actuator/metrics", headers={"Accept": "application/openmetrics-text"}
    )
    text = await response.text()
    assert text.endswith("# EOF\n")
    families = {f.name: f for f in parse_openmetrics(text)}  # type: ignore[no-untyped-call]
    assert families["logins"].samples[0].value == 1


async def test_default_registry_is_global() -> None:
    import prometheus_client

    exporter = MetricsExporter()
    assert exporter._registry is prometheus_client.REGISTRY
    body = (await Actuator(environ={}).metrics(accept="*/*")).body.decode()
    assert "python_info" in body


async def test_metrics_require_auth(actuator_client: Any) -> None:
    client = await actuator_client(
        settings=ActuatorSettings(metrics_require_auth=True), authorizer=bearer_authorizer
    )
    anonymous = await client.get("/actuator/metrics")
    assert anonymous.status == 401
    assert anonymous.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"'
    assert (await anonymous.json(content_type=None))["code"] == "invalid_token"
    forbidden = await client.get("/actuator/metrics", headers=VIEWER)
    assert forbidden.status == 403
    assert (await client.get("/actuator/metrics", headers=ADMIN)).status == 200


async def test_metrics_open_by_default(actuator_client: Any) -> None:
    client = await actuator_client(authorizer=bearer_authorizer)
    assert (await client.get("/actuator/metrics")).status == 200


# ------------------------------------------------------------------ middleware


async def test_middleware_labels_by_route_template(
    aiohttp_client: Any, registry: CollectorRegistry
) -> None:
    async def user(request: web.Request) -> web.Response:
        return web.json_response({"id": request.match_info["id"]})

    async def gone(request: web.Request) -> web.Response:
        raise web.HTTPGone()

    async def broken(request: web.Request) -> web.Response:
        raise RuntimeError("bug")

    app = web.Application(middlewares=[metrics_middleware(registry)])
    app.router.add_get("/users/{id}", user)
    app.router.add_get("/gone", gone)
    app.router.add_get("/broken", broken)
    client = await aiohttp_client(app)
    for user_id in ("1", "2", "3"):
        assert (await client.get(f"/users/{user_id}")).status == 200
    assert (await client.get("/nope/42")).status == 404
    assert (await client.post("/users/1")).status == 405
    assert (await client.get("/gone")).status == 410
    assert (await client.get("/broken")).status == 500
    assert (await client.request("PURGE", "/users/1")).status == 405

    counts = samples(registry, "http_server_requests_total")
    assert counts == {
        (("method", "GET"), ("route", "/users/{id}"), ("status", "200")): 3.0,
        (("method", "GET"), ("route", "UNMATCHED"), ("status", "404")): 1.0,
        (("method", "POST"), ("route", "UNMATCHED"), ("status", "405")): 1.0,
        (("method", "GET"), ("route", "/gone"), ("status", "410")): 1.0,
        (("method", "GET"), ("route", "/broken"), ("status", "500")): 1.0,
        (("method", "OTHER"), ("route", "UNMATCHED"), ("status", "405")): 1.0,
    }
    durations = samples(registry, "http_server_request_duration_seconds_count")
    assert durations[(("method", "GET"), ("route", "/users/{id}"))] == 3.0
    assert not any("/users/1" in str(key) for key in {**counts, **durations})


async def test_middleware_twice_on_one_registry(registry: CollectorRegistry) -> None:
    first = metrics_middleware(registry)
    second = metrics_middleware(registry)  # no "Duplicated timeseries" error
    assert first is not second


async def test_middleware_on_subapp_uses_full_template(
    aiohttp_client: Any, registry: CollectorRegistry
) -> None:
    async def item(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    sub = web.Application()
    sub.router.add_get("/items/{item_id}", item)
    app = web.Application(middlewares=[metrics_middleware(registry)])
    app.add_subapp("/api", sub)
    client = await aiohttp_client(app)
    assert (await client.get("/api/items/7")).status == 200
    assert (("method", "GET"), ("route", "/api/items/{item_id}"), ("status", "200")) in samples(
        registry, "http_server_requests_total"
    )


# ------------------------------------------------------------------ multiprocess


@pytest.mark.slow
async def test_multiprocess_mode_aggregates_workers(tmp_path: Path) -> None:
    worker = textwrap.dedent(
        """
        import sys
        from prometheus_client import Counter
        Counter("jobs", "Jobs done.").inc(int(sys.argv[1]))
        """
    )
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    for amount in ("2", "5"):
        subprocess.run([sys.executable, "-c", worker, amount], env=env, check=True, timeout=60)

    actuator = Actuator(environ={"PROMETHEUS_MULTIPROC_DIR": str(tmp_path)})
    response = await actuator.metrics(accept="text/plain")
    assert response.status == 200
    families = {f.name: f for f in text_string_to_metric_families(response.body.decode())}
    assert [s.value for s in families["jobs"].samples if s.name == "jobs_total"] == [7.0]


def test_multiprocess_dir_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ServiceActuatorError, match="PROMETHEUS_MULTIPROC_DIR"):
        Actuator(environ={"PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "missing")})


# ------------------------------------------------------------------ promtool


async def test_promtool_accepts_the_text_body(
    actuator_client: Any, registry: CollectorRegistry
) -> None:
    """``promtool check metrics`` lints Prometheus text (it does not read OpenMetrics, whose
    body is checked by prometheus-client's strict OpenMetrics parser above)."""
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool (Debian package 'prometheus') is not installed")
    Counter("logins", "Logins by outcome.", ["outcome"], registry=registry).labels("ok").inc()
    client = await actuator_client()
    await client.get("/actuator/health")
    await client.get("/actuator/nope")
    body = await (await client.get("/actuator/metrics", headers={"Accept": "text/plain"})).read()
    result = subprocess.run(
        [promtool, "check", "metrics"], input=body, capture_output=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()
