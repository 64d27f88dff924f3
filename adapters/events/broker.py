"""What the NATS and Redis event buses share (docs/reference/operations.md; ADR 0015).

A broker bus is an ``EventBus`` for many instances of the service: every event is delivered to
this process's subscribers as the in-process bus does, and a ``SharedEvent`` published here
(``origin`` None) is also sent to the broker on ``events.channel``; each other instance decodes
it, sets ``origin`` to the publisher's instance id, and delivers it to its own subscribers. A
received event is never sent on, and an instance ignores its own messages.

Wire format: one JSON object per message, ``{"v": 1, "type": "<event class>", "origin":
"<instance id>", "data": {<field>: <string or list of strings>}}`` — the event's fields, which
are ids and prefixes only, never secrets. Messages that are not valid JSON, name another type,
or carry other fields or values are logged (type only) and dropped.

The broker may be away: the bus starts anyway (``start()`` returns at once and a background
task connects, and reconnects, with growing delays up to ``MAX_RECONNECT_DELAY``), ``health()``
reports the ``events`` component DOWN meanwhile, and an event published while disconnected is
delivered here and logged as not sent (instances fall back on polling the key store).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit

import attrs
import orjson

from adapters.events.inprocess import InProcessEventBus
from application.events.catalog import (
    LOCAL_ONLY,
    ConfigChanged,
    Event,
    SharedEvent,
    SigningKeysChanged,
)
from application.ports import EventBus

log = logging.getLogger("authsvc.events")

E = TypeVar("E", bound=Event)

SHARED_EVENTS: Mapping[str, type[SharedEvent]] = {
    cls.__name__: cls for cls in (ConfigChanged, SigningKeysChanged)
}
"""The events a broker bus carries between instances, by wire ``type``."""
MAX_MESSAGE_BYTES = 65_536
"""Larger messages are dropped unread."""
MAX_RECONNECT_DELAY = 10.0
"""Seconds: the longest wait between two attempts to reach the broker."""


def _wire_names(cls: type[SharedEvent]) -> set[str]:
    """The fields of ``cls`` a message carries: all but ``origin`` and the local-only ones."""
    return {
        f.name for f in attrs.fields(cls) if f.name != "origin" and not f.metadata.get(LOCAL_ONLY)
    }


def encode(event: SharedEvent, origin: str) -> bytes:
    """The wire form of ``event`` published by instance ``origin``."""
    names = _wire_names(type(event))
    data = {
        f.name: list(v) if isinstance(v := getattr(event, f.name), tuple) else v
        for f in attrs.fields(type(event))
        if f.name in names
    }
    return orjson.dumps({"v": 1, "type": type(event).__name__, "origin": origin, "data": data})


def decode(raw: bytes) -> SharedEvent | None:
    """The event in a message, with ``origin`` set; None (and a log line) if it is not one."""
    try:
        message = orjson.loads(raw) if len(raw) <= MAX_MESSAGE_BYTES else None
        if not isinstance(message, dict) or message.get("v") != 1:
            raise ValueError("not an event")
        cls = SHARED_EVENTS[message["type"]]
        origin, data = message["origin"], message["data"]
        if not isinstance(origin, str):
            raise ValueError("origin")
        if not isinstance(data, dict) or set(data) != _wire_names(cls):
            raise ValueError("fields")
        values: dict[str, Any] = {}
        for name, value in data.items():
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                values[name] = tuple(value)
            elif isinstance(value, str):
                values[name] = value
            else:
                raise ValueError("values")
        return cls(**values, origin=origin)
    except (ValueError, KeyError, TypeError) as exc:
        log.warning("dropped a malformed event message (%s)", type(exc).__name__)
        return None


def redacted(url: str) -> str:
    """``url`` without user information (it may hold a password or token)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable URL>"
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}"


class BrokerEventBus(EventBus):
    """Base of the broker buses: local delivery, sending shared events, receiving them, and
    the connection state. Subclasses implement ``_run`` (connect, subscribe, stay connected,
    call ``_connected``/``_disconnected``/``_received``), ``_send`` and ``_shutdown``.

    ``url`` (may hold credentials: shown only redacted), ``channel`` (NATS subject / Redis
    channel), ``instance_id`` (default: random 16 hex digits, new per process).
    """

    backend = "broker"

    def __init__(self, url: str, channel: str, *, instance_id: str | None = None) -> None:
        self._url = url
        self._channel = channel
        self.instance_id = instance_id or secrets.token_hex(8)
        self._local = InProcessEventBus()
        self._task: asyncio.Task[None] | None = None
        self._up = asyncio.Event()
        self._error = "not connected yet"
        self._failures = 0

    # -- the port ----------------------------------------------------------------------------

    def subscribe(
        self, event_type: type[E], handler: Callable[[E], Awaitable[None] | None]
    ) -> None:
        """Call ``handler`` for every instance of ``event_type`` published here or received."""
        self._local.subscribe(event_type, handler)

    async def publish(self, event: Event) -> None:
        """Deliver ``event`` here; a ``SharedEvent`` from here is also sent to the broker (a
        failure to send is logged, never raised)."""
        await self._local.publish(event)
        if not isinstance(event, SharedEvent) or event.origin is not None:
            return
        if not self._up.is_set():
            log.warning("%s not sent: no connection to %s", type(event).__name__, self._where)
            return
        try:
            await self._send(encode(event, self.instance_id))
        except Exception as exc:
            log.warning("%s not sent to %s: %s", type(event).__name__, self._where, _why(exc))

    # -- lifetime ----------------------------------------------------------------------------

    async def start(self) -> None:
        """Start connecting in the background; returns at once (the broker may be away)."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"events:{self.backend}")

    async def wait_connected(self, within: float) -> bool:
        """True once connected, False if not within ``within`` seconds."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._up.wait(), within)
        return self._up.is_set()

    async def close(self) -> None:
        """Stop the background task and close the connection."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._up.clear()
        with contextlib.suppress(Exception):
            await self._shutdown()

    def health(self) -> dict[str, Any]:
        """The ``events`` component: ``{"backend", "channel", "broker"}`` (URL redacted), and
        while disconnected ``"status": "DOWN"`` with the last ``"error"``."""
        details: dict[str, Any] = {
            "backend": self.backend,
            "channel": self._channel,
            "broker": self._where,
        }
        if not self._up.is_set():
            details.update(status="DOWN", error=self._error)
        return details

    # -- for the subclasses ------------------------------------------------------------------

    @property
    def _where(self) -> str:
        return redacted(self._url)

    def _connected(self) -> None:
        if not self._up.is_set():
            log.info("events: connected to %s, channel %s", self._where, self._channel)
        self._up.set()
        self._failures = 0

    def _disconnected(self, exc: BaseException | str) -> None:
        self._error = exc if isinstance(exc, str) else _why(exc)
        if self._up.is_set() or self._failures == 0:
            log.warning("events: no connection to %s: %s", self._where, self._error)
        self._up.clear()
        self._failures += 1

    def _next_delay(self) -> float:
        """Seconds to wait before the next attempt: 0.5, 1, 2 ... up to the maximum."""
        return float(min(MAX_RECONNECT_DELAY, 0.5 * 2 ** min(self._failures, 5)))

    async def _received(self, raw: bytes) -> None:
        event = decode(raw)
        if event is None or event.origin == self.instance_id:
            return
        log.info("event %s from instance %s", type(event).__name__, event.origin)
        await self._local.publish(event)

    async def _run(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    async def _send(self, data: bytes) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    async def _shutdown(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


def _why(exc: BaseException) -> str:
    """A one-line reason without the URL's credentials (client errors may quote the URL)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if "@" in text:
        text = "(message withheld: it may quote credentials)"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


__all__ = [
    "MAX_RECONNECT_DELAY",
    "SHARED_EVENTS",
    "BrokerEventBus",
    "decode",
    "encode",
    "redacted",
]
