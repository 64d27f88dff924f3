"""Contract of the broker event buses (``adapters.events``: NATS and Redis; issue 16,
docs/reference/operations.md), against the machine's brokers (``AUTHSVC_TEST_NATS_URL``,
``AUTHSVC_TEST_REDIS_URL``; skipped without them): shared events reach every other instance
with ``origin`` set and are never echoed back; other events stay in their process; messages
carry ids only; an unreachable broker is reported DOWN and the bus reconnects."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

from adapters.events.broker import BrokerEventBus, decode, encode
from adapters.events.nats_bus import NatsEventBus
from adapters.events.redis_bus import RedisEventBus
from application.events.catalog import (
    ConfigChanged,
    Event,
    LoginSucceeded,
    SigningKeysChanged,
)
from tests.brokers import BROKERS, new_channel, require_broker

BUSES: dict[str, Callable[..., BrokerEventBus]] = {"nats": NatsEventBus, "redis": RedisEventBus}


@pytest.fixture(params=BROKERS)
async def pair(request: pytest.FixtureRequest) -> AsyncIterator[tuple[BrokerEventBus, ...]]:
    """Two instances' buses on one fresh channel, connected."""
    url = require_broker(request.param)
    channel = new_channel()
    buses = tuple(BUSES[request.param](url, channel) for _ in range(2))
    for bus in buses:
        await bus.start()
    try:
        for bus in buses:
            assert await bus.wait_connected(10)
        yield buses
    finally:
        for bus in buses:
            await bus.close()


class Heard:
    def __init__(self, bus: BrokerEventBus) -> None:
        self.events: list[Event] = []
        bus.subscribe(Event, self.events.append)

    async def wait_for(self, n: int) -> list[Event]:
        for _ in range(100):
            if len(self.events) >= n:
                break
            await asyncio.sleep(0.05)
        return self.events


async def test_shared_events_reach_the_other_instance_with_their_origin(
    pair: tuple[BrokerEventBus, BrokerEventBus],
) -> None:
    a, b = pair
    heard_a, heard_b = Heard(a), Heard(b)
    await a.publish(ConfigChanged(changed=("auth",)))
    await b.publish(SigningKeysChanged(kids=("kid-1",), reason="rotated"))
    mine_b = SigningKeysChanged(kids=("kid-1",), reason="rotated")
    from_a = ConfigChanged(changed=("auth",), origin=a.instance_id)
    assert set(map(repr, await heard_b.wait_for(2))) == {repr(mine_b), repr(from_a)}
    mine_a = ConfigChanged(changed=("auth",))
    from_b = SigningKeysChanged(kids=("kid-1",), reason="rotated", origin=b.instance_id)
    assert set(map(repr, await heard_a.wait_for(2))) == {repr(mine_a), repr(from_b)}
    await asyncio.sleep(0.3)  # nothing echoed back, nothing sent twice
    assert len(heard_a.events) == len(heard_b.events) == 2


async def test_other_events_stay_in_their_process(
    pair: tuple[BrokerEventBus, BrokerEventBus],
) -> None:
    a, b = pair
    heard_b = Heard(b)
    await a.publish(LoginSucceeded(user_id="u1", family_id="f1"))
    await a.publish(ConfigChanged(changed=("actuator",)))
    assert await heard_b.wait_for(1) == [ConfigChanged(changed=("actuator",), origin=a.instance_id)]


async def test_a_received_event_is_not_sent_on(pair: tuple[BrokerEventBus, BrokerEventBus]) -> None:
    a, b = pair
    heard_a = Heard(a)
    b.subscribe(ConfigChanged, lambda e: b.publish(e))  # re-publishing keeps the origin
    await a.publish(ConfigChanged(changed=("auth",)))
    await asyncio.sleep(0.5)
    assert heard_a.events == [ConfigChanged(changed=("auth",))]


@pytest.mark.parametrize("backend", ["nats", "redis"])
async def test_an_unreachable_broker_is_down_and_nothing_is_raised(backend: str) -> None:
    url = f"{backend}://user:secret@127.0.0.1:9"
    bus = BUSES[backend](url, new_channel())
    heard = Heard(bus)
    await bus.start()
    try:
        assert not await bus.wait_connected(0.5)
        health = bus.health()
        assert health["status"] == "DOWN" and health["backend"] == backend
        assert health["broker"] == f"{backend}://127.0.0.1:9"
        assert "secret" not in repr(health)
        await bus.publish(ConfigChanged(changed=("auth",)))  # delivered here, not sent
        assert heard.events == [ConfigChanged(changed=("auth",))]
    finally:
        await bus.close()


async def test_redis_bus_reconnects_after_its_connection_is_killed() -> None:
    url = require_broker("redis")
    import redis.asyncio as aioredis

    channel = new_channel()
    a, b = RedisEventBus(url, channel), RedisEventBus(url, channel)
    for bus in (a, b):
        await bus.start()
    admin = aioredis.Redis.from_url(url)
    try:
        assert await a.wait_connected(10) and await b.wait_connected(10)
        heard = Heard(b)
        killed = await admin.client_kill_filter(_type="pubsub", skipme=True)
        assert killed >= 1
        for _ in range(100):  # DOWN, then UP again
            await asyncio.sleep(0.1)
            if await b.wait_connected(0) and "status" not in b.health():
                await a.publish(ConfigChanged(changed=("auth",)))
                if await heard.wait_for(1):
                    break
        assert heard.events == [ConfigChanged(changed=("auth",), origin=a.instance_id)]
    finally:
        await admin.aclose()
        for bus in (a, b):
            await bus.close()


def test_the_wire_form_carries_the_fields_and_the_origin_only() -> None:
    event = SigningKeysChanged(kids=("k1", "k2"), reason="rotated")
    raw = encode(event, "abc123")
    assert raw == (
        b'{"v":1,"type":"SigningKeysChanged","origin":"abc123",'
        b'"data":{"kids":["k1","k2"],"reason":"rotated"}}'
    )
    assert decode(raw) == SigningKeysChanged(kids=("k1", "k2"), reason="rotated", origin="abc123")


def test_the_refreshing_caller_stays_on_its_instance() -> None:
    """``ConfigChanged.actor_id`` names the caller in this instance's audit row only: it is
    not on the wire, and a peer hears the event without it."""
    raw = encode(ConfigChanged(changed=("auth",), actor_id="root-id"), "abc123")
    assert raw == b'{"v":1,"type":"ConfigChanged","origin":"abc123","data":{"changed":["auth"]}}'
    assert decode(raw) == ConfigChanged(changed=("auth",), origin="abc123")


@pytest.mark.parametrize(
    "raw",
    [
        b"not json",
        b'{"v":1,"type":"LoginSucceeded","origin":"x","data":{"user_id":"u","family_id":"f"}}',
        b'{"v":2,"type":"ConfigChanged","origin":"x","data":{"changed":["auth"]}}',
        b'{"v":1,"type":"ConfigChanged","origin":"x","data":{"changed":[1]}}',
        b'{"v":1,"type":"ConfigChanged","origin":"x","data":{"changed":["a"],"extra":"y"}}',
        b'{"v":1,"type":"ConfigChanged","origin":7,"data":{"changed":["auth"]}}',
        b"[]",
    ],
)
def test_malformed_messages_are_dropped(raw: bytes) -> None:
    assert decode(raw) is None
