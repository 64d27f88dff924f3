"""Client authentication at the token endpoint for the code flow (OpenID Connect Core 1.0 §9;
OAuth 2.1 §2.4; docs/reference/oauth-and-oidc.md): ``client_secret_basic``, ``client_secret_post``,
or ``none`` for a public client (its ``client_id`` only; PKCE is its proof)."""

from __future__ import annotations

import re
from typing import NoReturn

import attrs

from application.events.audit import publish_failure
from application.events.clients import ClientAuthFailed
from application.oauth.grants import ClientAuthenticator, OAuthError
from application.ports import Clock, EventBus, Storage
from domain.clients import Client

__all__ = ["AUTH_METHODS", "CodeClientAuthenticator"]

AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none")
_CLIENT_ID = re.compile(r"[0-9a-f]{32}")


@attrs.frozen
class CodeClientAuthenticator:
    """``await authenticate(client_id, secret, method)`` → the enabled ``Client`` that
    registered ``method`` (how the request authenticated: ``client_secret_basic``,
    ``client_secret_post`` or ``none`` with ``secret`` None). Anything else is
    ``OAuthError("invalid_client")`` (401), recorded as ``client.auth_failed``."""

    _storage: Storage
    _bus: EventBus
    _clock: Clock
    _secrets: ClientAuthenticator

    async def authenticate(self, client_id: str, secret: str | None, method: str) -> Client:
        """The client, authenticated by ``method``."""
        if secret is not None:
            client = await self._secrets.authenticate(client_id, secret)
            if client.public or client.token_endpoint_auth_method != method:
                await self._refuse(client, "wrong_method")
            return client
        found = None
        if _CLIENT_ID.fullmatch(client_id):
            async with self._storage.read() as uow:
                found = await uow.clients.get(client_id)
        if found is None or found.disabled or not found.public:
            await self._refuse(found, "unknown_client" if found is None else "wrong_method")
        return found

    async def _refuse(self, client: Client | None, reason: str) -> NoReturn:
        failed = ClientAuthFailed(
            None if client is None else client.id, None if client is None else client.org_id, reason
        )
        await publish_failure(self._storage, self._bus, self._clock.now(), failed)
        raise OAuthError("invalid_client", "client authentication failed", 401)
