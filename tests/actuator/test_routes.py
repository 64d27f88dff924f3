"""setup_actuator: the six routes, the app key, the prefix."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

from service_actuator import Actuator
from service_actuator.aiohttp import ACTUATOR_KEY, setup_actuator


def test_routes_and_app_key() -> None:
    app = web.Application()
    actuator = Actuator(environ={})
    assert setup_actuator(app, actuator) is app
    assert app[ACTUATOR_KEY] is actuator
    routes = {
        (route.method, route.resource.canonical)
        for route in app.router.routes()
        if route.method != "HEAD" and route.resource is not None
    }
    assert routes == {
        ("GET", "/actuator/health"),
        ("GET", "/actuator/health/live"),
        ("GET", "/actuator/health/ready"),
        ("GET", "/actuator/info"),
        ("GET", "/actuator/metrics"),
        ("POST", "/actuator/refresh"),
    }
    assert app.router["actuator.health"].url_for().path == "/actuator/health"


async def test_custom_prefix(actuator_client: Any) -> None:
    client = await actuator_client(prefix="/manage")
    assert (await client.get("/manage/health/live")).status == 200
    assert (await client.get("/actuator/health/live")).status == 404


async def test_head_is_answered(actuator_client: Any) -> None:
    client = await actuator_client()
    assert (await client.head("/actuator/health")).status == 200


@pytest.mark.parametrize("prefix", ["actuator", "/actuator/", ""])
def test_bad_prefix(prefix: str) -> None:
    with pytest.raises(ValueError):
        setup_actuator(web.Application(), Actuator(environ={}), prefix=prefix)
