"""The bearer token of a request (RFC 6750 section 2.1), for the route modules and the actuator's
authorizer alike; it imports nothing of the app, so ``entrypoints.actuator`` may use it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from domain.errors import InvalidToken


class WithHeaders(Protocol):
    """What ``bearer_token`` reads of a request: its headers (an aiohttp ``web.Request``)."""

    @property
    def headers(self) -> Mapping[str, str]: ...


def bearer_token(request: WithHeaders) -> str:
    """The token of an ``Authorization: Bearer <token>`` header (RFC 6750 section 2.1).

    Raises ``InvalidToken`` when the header is missing or uses another scheme.
    """
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise InvalidToken("a Bearer access token is required")
    return token.strip()
