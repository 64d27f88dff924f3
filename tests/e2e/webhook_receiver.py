"""A webhook receiver for the tests (the Standard Webhooks specification): an aiohttp server on
127.0.0.1 that records each POST (headers and raw body), answering 503 to the first
``fail_first`` POSTs and 200 after; and the receiver's check of a message with the
``standardwebhooks`` library."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import attrs
from aiohttp import web
from aiohttp.test_utils import TestServer
from standardwebhooks.webhooks import Webhook


@attrs.frozen
class Received:
    """One POST: its headers (lower-case names) and raw body."""

    headers: dict[str, str]
    body: bytes


@attrs.define
class Receiver:
    """The recorded POSTs: ``taken`` (answered 200) and ``refused`` (answered 503)."""

    fail_first: int = 0
    taken: list[Received] = attrs.field(factory=list)
    refused: list[Received] = attrs.field(factory=list)
    server: TestServer | None = None

    async def _post(self, request: web.Request) -> web.Response:
        got = Received({k.lower(): v for k, v in request.headers.items()}, await request.read())
        if len(self.refused) < self.fail_first:
            self.refused.append(got)
            return web.Response(status=503)
        self.taken.append(got)
        return web.Response(status=204)

    async def start(self) -> str:
        """Start serving; returns the endpoint's URL."""
        app = web.Application()
        app.router.add_post("/hook", self._post)
        self.server = TestServer(app, host="127.0.0.1")
        await self.server.start_server()
        return str(self.server.make_url("/hook"))

    async def close(self) -> None:
        if self.server is not None:
            await self.server.close()

    async def wait_for(self, count: int, timeout: float = 20.0) -> list[Received]:
        """The POSTs taken once at least ``count`` were (fails after ``timeout`` seconds)."""
        async with asyncio.timeout(timeout):
            while len(self.taken) < count:
                await asyncio.sleep(0.05)
        return list(self.taken)


def verified(secret: str, got: Received) -> dict[str, Any]:
    """The message after the receiver's check with ``standardwebhooks.Webhook(secret).verify``
    (raises ``WebhookVerificationError`` for a bad signature or a stale timestamp)."""
    headers = {k: got.headers[k] for k in ("webhook-id", "webhook-timestamp", "webhook-signature")}
    message: dict[str, Any] = Webhook(secret).verify(got.body, headers)
    assert message == json.loads(got.body)
    return message
