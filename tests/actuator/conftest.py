"""Fixtures for the service_actuator tests: fake indicators, an authorizer, an app factory."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from prometheus_client import CollectorRegistry

from service_actuator import Access, Action, Actuator
from service_actuator.aiohttp import metrics_middleware, setup_actuator


@dataclass
class SyncIndicator:
    """A blocking check: sleeps ``delay`` seconds (interruptible via ``release``)."""

    name: str
    result: Any = True
    delay: float = 0.0
    release: threading.Event = field(default_factory=threading.Event)
    calls: int = 0

    def check(self) -> Any:
        self.calls += 1
        if self.delay:
            self.release.wait(self.delay)
        return self.result


@dataclass
class AsyncIndicator:
    """A non-blocking check: ``await asyncio.sleep(delay)``."""

    name: str
    result: Any = True
    delay: float = 0.0

    async def check(self) -> Any:
        if self.delay:
            await asyncio.sleep(self.delay)
        return self.result


@dataclass
class RaisingIndicator:
    name: str
    exc: Exception = field(default_factory=lambda: ConnectionRefusedError("db down"))

    def check(self) -> Any:
        raise self.exc


def bearer_authorizer(request: web.Request, action: Action) -> Access | str:
    """``Bearer admin`` may do everything; ``Bearer viewer`` is forbidden; else 401."""
    header = request.headers.get("Authorization")
    if header == "Bearer admin":
        return Access.OK
    if header == "Bearer viewer":
        return "forbidden"
    return "unauthenticated"


ADMIN = {"Authorization": "Bearer admin"}
VIEWER = {"Authorization": "Bearer viewer"}


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
