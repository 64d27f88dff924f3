"""Fixtures for the service_actuator tests: a registry, blocking indicators released at teardown,
an app factory (the fake indicators and the authorizer are in ``tests.actuator.fakes``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from prometheus_client import CollectorRegistry

from service_actuator import Actuator
from service_actuator.aiohttp import metrics_middleware, setup_actuator
from tests.actuator.fakes import SyncIndicator


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
async def slow_sync_indicators() -> AsyncIterator[list[SyncIndicator]]:
    """Blocking indicators registered here are released at teardown, so no thread lingers.

    An async fixture, so it is torn down before the event loop (whose close waits for the
    default executor's threads).
    """
    made: list[SyncIndicator] = []
    yield made
    for indicator in made:
        indicator.release.set()


ClientFactory = Callable[..., Awaitable[TestClient[web.Request, web.Application]]]


@pytest.fixture
def actuator_client(
    aiohttp_client: Any, registry: CollectorRegistry
) -> Callable[..., Awaitable[TestClient[web.Request, web.Application]]]:
    """``await actuator_client(**actuator_kwargs)``: a test client over an app with the routes."""

    async def make(
        *, prefix: str = "/actuator", environ: Mapping[str, str] | None = None, **kwargs: Any
    ) -> TestClient[web.Request, web.Application]:
        kwargs.setdefault("registry", registry)
        actuator = Actuator(environ={} if environ is None else environ, **kwargs)
        app = web.Application(middlewares=[metrics_middleware(registry)])
        setup_actuator(app, actuator, prefix=prefix)
        client: TestClient[web.Request, web.Application] = await aiohttp_client(app)
        return client

    return make
