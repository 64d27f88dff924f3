"""Test doubles of the service_actuator tests: indicators that block, await or raise, and an
authorizer that knows two bearer tokens (``ADMIN``, ``VIEWER``)."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from service_actuator import Access, Action


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
