"""Without prometheus-client: /metrics answers 501 problem+json, everything else works.

The check runs in a fresh interpreter in which ``prometheus_client`` cannot be imported (a
``sys.meta_path`` finder refuses it), so nothing of our own code is mocked.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.actuator.fresh import REPO_ROOT, run_fresh
from tests.no_prometheus import REFUSE_PROMETHEUS

SCRIPT = REFUSE_PROMETHEUS + textwrap.dedent(
    """
    import asyncio, importlib.abc, json, sys


    from aiohttp import web
    from aiohttp.test_utils import TestClient, TestServer

    import service_actuator
    from service_actuator import METRICS_AVAILABLE, Actuator, ActuatorSettings, HealthCheck
    from service_actuator.aiohttp import metrics_middleware, setup_actuator

    async def main():
        actuator = Actuator(
            ActuatorSettings(show_details="always"),
            indicators=[HealthCheck("ping", lambda: True)],
            environ={"PROMETHEUS_MULTIPROC_DIR": "/nonexistent"},
        )
        app = web.Application(middlewares=[metrics_middleware()])
        app.router.add_get("/hello", lambda request: web.Response(text="hi"))
        setup_actuator(app, actuator)
        async with TestClient(TestServer(app)) as client:
            metrics = await client.get("/actuator/metrics")
            health = await client.get("/actuator/health")
            hello = await client.get("/hello")
            print(json.dumps({
                "available": METRICS_AVAILABLE,
                "package": service_actuator.__file__,
                "prometheus_loaded": any(m.startswith("prometheus_client") for m in sys.modules),
                "metrics_status": metrics.status,
                "metrics_type": metrics.headers["Content-Type"],
                "metrics_body": json.loads(await metrics.text()),
                "health_status": health.status,
                "health_body": await health.json(),
                "hello": [hello.status, await hello.text()],
            }))

    asyncio.run(main())
    """
)


@pytest.mark.slow
def test_metrics_is_501_and_the_rest_works_without_prometheus_client() -> None:
    result = run_fresh(SCRIPT, unset=("PROMETHEUS_MULTIPROC_DIR",))
    assert result["package"] == str(REPO_ROOT / "service_actuator" / "__init__.py")
    assert result["available"] is False
    assert result["prometheus_loaded"] is False
    assert result["metrics_status"] == 501
    assert result["metrics_type"] == "application/problem+json"
    assert result["metrics_body"] == {
        "type": "about:blank",
        "title": "Not Implemented",
        "status": 501,
        "detail": "Metrics need prometheus-client: install the 'metrics' extra.",
        "code": "metrics_unavailable",
    }
    assert result["health_status"] == 200
    assert result["health_body"] == {
        "status": "UP",
        "components": {"ping": {"status": "UP", "details": {}}},
    }
    assert result["hello"] == [200, "hi"]
