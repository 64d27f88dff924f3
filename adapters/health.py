"""Health indicators of the service (docs/reference/operations.md): the database, the signing key,
the readiness state and the event bus.

Each satisfies ``service_actuator.HealthIndicator`` (``name`` plus ``check()``); the container
registers all but ``events`` as readiness indicators, so they count for ``/actuator/health`` and
``/actuator/health/ready`` and never for ``/actuator/health/live``; ``events`` counts for
``/actuator/health`` only. A check that raises is
reported DOWN by the actuator with ``details.error`` = ``"<exception class>: <message>"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from application.ports import Storage


class DatabaseHealth:
    """Component ``db``: a real round trip to the configured storage (``Storage.ping()``,
    e.g. ``SELECT 1``).

    ``check()`` (async) returns ``{"backend": "sqlite" | "postgres" | "memory"}`` when the query
    succeeds; it raises whatever the storage raises (closed connection, unreachable server,
    unreadable file, ``StorageFault`` while SQLite cannot write), which the actuator reports as
    DOWN. The storage keeps its ping short (PostgreSQL: its own connection, 1 s per step), so
    readiness turns DOWN within about a second of an outage and UP within one of its end
    (docs/reference/operations.md); the actuator's ``indicator_timeout`` (default 2 s) bounds it
    too.
    """

    name = "db"

    def __init__(self, storage: Storage, backend: str) -> None:
        self._storage = storage
        self._backend = backend

    async def check(self) -> dict[str, Any]:
        """Ping the database; ``{"backend": name}`` on success, raises on failure."""
        await self._storage.ping()
        return {"backend": self._backend}


class SupportsSignerHealth(Protocol):
    """What the signing-key indicator needs of a signer (``JwtSigner.health``)."""

    def health(self) -> Mapping[str, Any]:
        """Signs and verifies a probe; details (``alg``, ``kid`` ...) or raises."""
        ...


class SigningKeyHealth:
    """Component ``signingKey``: the active key signs and verifies a probe.

    ``check()`` is synchronous (ML-DSA/RSA signing is CPU work; the actuator runs sync checks in
    a worker thread) and returns ``{"alg", "kid", "backend", "verification_kids"}`` — public
    identifiers only, never key material. Raises ``SignerUnavailable`` if the key cannot sign.
    """

    name = "signingKey"

    def __init__(self, signer: SupportsSignerHealth) -> None:
        self._signer = signer

    def check(self) -> dict[str, Any]:
        """The signer's health details; raises when the active key is unusable."""
        return dict(self._signer.health())


class SupportsEventsHealth(Protocol):
    """What the events indicator needs of a bus (``health()`` of the in-process, NATS and
    Redis buses)."""

    def health(self) -> Mapping[str, Any]:
        """``{"backend", ...}``, with ``"status": "DOWN"`` while the broker is unreachable."""
        ...


class EventsHealth:
    """Component ``events`` (docs/reference/operations.md): the event bus and its broker connection.

    ``check()`` returns the bus's ``health()``: ``{"backend": "memory"}``, or for NATS and Redis
    ``{"backend", "channel", "broker"}`` (URL without credentials) plus ``"status": "DOWN"`` and
    the last ``"error"`` while the broker cannot be reached. Registered as a plain indicator,
    **not** a readiness one: serving tokens does not need the broker (a missed announcement only
    delays; instances poll the key store), so readiness stays UP while ``/actuator/health``
    shows the component DOWN.
    """

    name = "events"

    def __init__(self, bus: SupportsEventsHealth) -> None:
        self._bus = bus

    async def check(self) -> dict[str, Any]:
        """The bus's state; never raises."""
        return dict(self._bus.health())


class ReadinessState:
    """Component ``readinessState`` (Spring Boot's availability state): UP while the service
    accepts traffic, DOWN from the moment a graceful shutdown begins (docs/reference/operations.md),
    so a load balancer stops sending requests while those in flight still finish.

    ``check()`` returns ``{"state": "ACCEPTING_TRAFFIC"}``, or ``{"status": "DOWN", "state":
    "REFUSING_TRAFFIC"}`` after ``refuse_traffic()``.
    """

    name = "readinessState"

    def __init__(self) -> None:
        self._accepting = True

    def refuse_traffic(self) -> None:
        """Turn readiness DOWN for good (the process is shutting down)."""
        self._accepting = False

    def check(self) -> dict[str, Any]:
        """The state; never raises."""
        if self._accepting:
            return {"state": "ACCEPTING_TRAFFIC"}
        return {"status": "DOWN", "state": "REFUSING_TRAFFIC"}
