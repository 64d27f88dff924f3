"""The EventBus over Redis publish/subscribe (``events.backend = "redis"``, redis-py asyncio).

See ``adapters.events.broker`` for what is sent and how a broker outage is handled. A
background task holds the subscription (``PUBLISH``/``SUBSCRIBE`` on ``events.channel``); when
the connection drops it reconnects with growing delays and subscribes again. Delivery is at
most once: an instance that misses a message catches up by polling (keys) or at its next
refresh.
"""

from __future__ import annotations

import asyncio
import logging

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from adapters.events.broker import BrokerEventBus

log = logging.getLogger("authsvc.events")

POLL_SECONDS = 5.0
"""How long one wait for a message lasts; the connection is checked (PING) every 10 s."""


class RedisEventBus(BrokerEventBus):
    """``BrokerEventBus`` on the Redis server at ``url`` (``redis://`` or ``rediss://``),
    channel ``channel``."""

    backend = "redis"

    def __init__(self, url: str, channel: str, *, instance_id: str | None = None) -> None:
        super().__init__(url, channel, instance_id=instance_id)
        self._client: aioredis.Redis | None = None

    def _redis(self) -> aioredis.Redis:
        if self._client is None:
            self._client = aioredis.Redis.from_url(
                self._url,
                socket_connect_timeout=2,
                socket_timeout=POLL_SECONDS * 2,
                health_check_interval=10,
                client_name=f"authsvc-{self.instance_id}",
            )
        return self._client

    async def _run(self) -> None:
        while True:
            pubsub = self._redis().pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self._channel)
                self._connected()
                while True:
                    message = await pubsub.get_message(timeout=POLL_SECONDS)
                    if message is not None and message.get("type") == "message":
                        try:
                            await self._received(message["data"])
                        except Exception:
                            log.exception("events: handling a received message failed")
            except (RedisError, OSError, TimeoutError) as exc:
                self._disconnected(exc)
            finally:
                try:
                    await pubsub.aclose()  # type: ignore[no-untyped-call]
                except (RedisError, OSError, TimeoutError):
                    pass
            await asyncio.sleep(self._next_delay())

    async def _send(self, data: bytes) -> None:
        await self._redis().publish(self._channel, data)

    async def _shutdown(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()
