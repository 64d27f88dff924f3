"""Health indicators of the service (contract section 4): the database and the signing key.

Both satisfy ``application.ports.HealthIndicator`` and ``service_actuator.HealthIndicator``
(``name`` plus ``check()``); the container registers them as readiness indicators, so they count
for ``/actuator/health`` and ``/actuator/health/ready`` and never for ``/actuator/health/live``.
A check that raises is reported DOWN by the actuator with ``details.error`` =
``"<exception class>: <message>"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from application.ports import UnitOfWork


class DatabaseHealth:
    """Component ``db``: a real round trip to the configured storage (``UnitOfWork.ping()``,
    e.g. ``SELECT 1``).

    ``check()`` (async) returns ``{"backend": "sqlite" | "postgres" | "memory"}`` when the query
    succeeds; it raises whatever the storage raises (closed connection, unreachable server,
    unreadable file), which the actuator reports as DOWN. It must be bounded by the actuator's
    ``indicator_timeout`` (default 2 s), not by its own timer.
    """

    name = "db"

    def __init__(self, uow: UnitOfWork, backend: str) -> None:
        self._uow = uow
        self._backend = backend

    async def check(self) -> dict[str, Any]:
        """Ping the database; ``{"backend": name}`` on success, raises on failure."""
        await self._uow.ping()
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
