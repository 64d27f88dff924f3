"""``HttpSender`` on aiohttp's client (docs/adr/0049-durable-outbox.md): timeouts, no redirects
followed, the answer's body not read beyond a small bound, and optionally the server-side
request forgery guard of docs/adr/0049-durable-outbox.md — the target's addresses are checked after
DNS resolution, in the resolver the connection itself uses, so a name cannot resolve to a public
address for the check and a private one for the connection."""

from __future__ import annotations

import socket
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

from application.ports import DeliveryFailed, HttpSender
from domain.network import is_public_address

__all__ = ["AiohttpSender", "PrivateTarget", "PublicOnlyResolver"]

TIMEOUT = aiohttp.ClientTimeout(total=10, connect=5)
"""A delivery's limits in seconds: 5 to connect, 10 in all."""
_MAX_BODY = 64 * 1024


class PrivateTarget(OSError):
    """A name resolved only to addresses the guard refuses (``PublicOnlyResolver``; aiohttp
    wraps it in ``ClientConnectorError.os_error``)."""


class PublicOnlyResolver(AbstractResolver):
    """A resolver that keeps only public addresses (``domain.network.is_public_address``) of
    what ``inner`` resolves; raises ``PrivateTarget`` when none is left. The one guard of
    outbound requests to addresses a tenant chose: webhook deliveries (ADR 0052) and
    ``jwks_uri`` fetches (``adapters.crypto.client_assertions``, ADR 0055)."""

    def __init__(self, inner: AbstractResolver | None = None) -> None:
        self._inner = inner or DefaultResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        """The public addresses of ``host``."""
        found = await self._inner.resolve(host, port, family)
        public = [r for r in found if is_public_address(r["host"])]
        if not public:
            raise PrivateTarget(f"{host} resolves to no public address")
        return public

    async def close(self) -> None:
        """Close the inner resolver."""
        await self._inner.close()


class AiohttpSender(HttpSender):
    """POSTs with a session of its own (made on first use, in the running loop; ``close()``
    releases it). ``allow_private`` False: targets on loopback, private, link-local and other
    non-public addresses are refused (``DeliveryFailed(refused=True)``), IP literals before
    connecting and names after resolution; True (back-channel logout endpoints, tests'
    receivers with ``webhooks.allow_private_targets``): any address."""

    def __init__(self, *, allow_private: bool, resolver: AbstractResolver | None = None) -> None:
        self._allow_private = allow_private
        self._resolver = resolver
        self._session: aiohttp.ClientSession | None = None

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            resolver: Any = self._resolver
            if not self._allow_private:
                resolver = PublicOnlyResolver(self._resolver)
            connector = aiohttp.TCPConnector(resolver=resolver, limit=50)
            self._session = aiohttp.ClientSession(timeout=TIMEOUT, connector=connector)
        return self._session

    async def close(self) -> None:
        """Release the connections."""
        if self._session is not None:
            await self._session.close()

    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> int:
        """POST ``body``; the status code. Raises ``DeliveryFailed``."""
        host = urlsplit(url).hostname or ""
        if not self._allow_private and _is_literal(host) and not is_public_address(host):
            raise DeliveryFailed("private_target", refused=True)
        try:
            async with self._http().post(
                url, data=body, headers=dict(headers), allow_redirects=False
            ) as answer:
                await answer.content.read(_MAX_BODY)
                return answer.status
        except aiohttp.ClientConnectorError as exc:
            if isinstance(exc.os_error, PrivateTarget):
                raise DeliveryFailed("private_target", refused=True) from None
            raise DeliveryFailed(f"connection: {type(exc).__name__}") from None
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            raise DeliveryFailed(f"connection: {type(exc).__name__}") from None


def _is_literal(host: str) -> bool:
    try:
        socket.inet_pton(socket.AF_INET6 if ":" in host else socket.AF_INET, host)
    except OSError:
        return False
    return True
