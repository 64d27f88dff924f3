"""The EventBus over NATS core publish/subscribe (``events.backend = "nats"``, nats-py).

See ``adapters.events.broker`` for what is sent and how a broker outage is handled. nats-py
keeps retrying the first connection and reconnects by itself afterwards (subscriptions are
renewed); its callbacks keep the ``events`` health component current. Delivery is at most once:
an instance that misses a message catches up by polling (keys) or at its next refresh.
"""

from __future__ import annotations

import logging

from nats.aio.client import Client as NATS

from adapters.events.broker import BrokerEventBus

log = logging.getLogger("authsvc.events")


class NatsEventBus(BrokerEventBus):
    """``BrokerEventBus`` on the NATS server at ``url`` (``nats://`` or ``tls://``), subject
    ``channel``."""

    backend = "nats"

    def __init__(self, url: str, channel: str, *, instance_id: str | None = None) -> None:
        super().__init__(url, channel, instance_id=instance_id)
        self._nc: NATS | None = None

    async def _run(self) -> None:
        nc = self._nc = NATS()

        async def on_error(exc: Exception) -> None:
            if not nc.is_connected:
                self._disconnected(exc)
            else:
                log.warning("events: NATS reports %s", type(exc).__name__)

        async def on_disconnected() -> None:
            self._disconnected("disconnected")

        async def on_reconnected() -> None:
            self._connected()

        await nc.connect(
            servers=[self._url],
            name=f"authsvc-{self.instance_id}",
            connect_timeout=2,
            allow_reconnect=True,
            max_reconnect_attempts=-1,  # also retries the first connection, forever
            reconnect_time_wait=1,
            error_cb=on_error,
            disconnected_cb=on_disconnected,
            reconnected_cb=on_reconnected,
        )

        async def on_message(msg: object) -> None:
            try:
                await self._received(msg.data)  # type: ignore[attr-defined]
            except Exception:
                log.exception("events: handling a received message failed")

        await nc.subscribe(self._channel, cb=on_message)
        await nc.flush(timeout=5)
        self._connected()

    async def _send(self, data: bytes) -> None:
        assert self._nc is not None
        await self._nc.publish(self._channel, data)
        await self._nc.flush(timeout=5)

    async def _shutdown(self) -> None:
        nc, self._nc = self._nc, None
        if nc is not None and not nc.is_closed:
            await nc.close()
