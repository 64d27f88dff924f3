"""Client authentication at the token endpoint for the code flow (OpenID Connect Core 1.0 §9;
OAuth 2.1 §2.4; docs/reference/oauth-and-oidc.md): ``client_secret_basic``, ``client_secret_post``,
``none`` for a public client (its ``client_id`` only; PKCE is its proof), or ``private_key_jwt``
(RFC 7523: an assertion signed with one of the client's registered keys, its ``jti`` used once
on every instance, stored until its ``exp``)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import NoReturn

import attrs

from application.events.audit import publish_failure
from application.events.clients import ClientAuthFailed
from application.oauth.grants import ClientAuthenticator, OAuthError
from application.ports import ClientAssertionVerifier, Clock, EventBus, Storage
from domain.clients import Client
from domain.errors import InvalidClientAssertion

__all__ = [
    "AUTH_METHODS",
    "JWT_BEARER",
    "MAX_ASSERTION_LIFETIME",
    "PRIVATE_KEY_JWT",
    "CodeClientAuthenticator",
]

AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none", "private_key_jwt")
PRIVATE_KEY_JWT = "private_key_jwt"
JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
"""The ``client_assertion_type`` of RFC 7523 §2.2."""
MAX_ASSERTION_LIFETIME = 300
"""The latest ``exp`` an assertion may carry, in seconds from now: a short-lived proof."""
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
    _assertions: ClientAssertionVerifier

    async def authenticate(
        self, client_id: str, secret: str | None, method: str, audiences: tuple[str, ...] = ()
    ) -> Client:
        """The client, authenticated by ``method``; for ``private_key_jwt`` ``secret`` is the
        assertion, ``client_id`` may be empty (then the assertion's ``iss`` names the client)
        and its ``aud`` must name one of ``audiences``."""
        if method == PRIVATE_KEY_JWT:
            return await self._by_assertion(client_id, secret or "", audiences)
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

    async def _by_assertion(
        self, client_id: str, assertion: str, audiences: tuple[str, ...]
    ) -> Client:
        named = client_id or self._assertions.unverified_issuer(assertion) or ""
        found = None
        if _CLIENT_ID.fullmatch(named):
            async with self._storage.read() as uow:
                found = await uow.clients.get(named)
        if found is None or found.disabled or found.token_endpoint_auth_method != PRIVATE_KEY_JWT:
            await self._refuse(found, "unknown_client" if found is None else "wrong_method")
        now = self._clock.now()
        try:
            checked = await self._assertions.verify(
                assertion, found.id, found.jwks, found.jwks_uri, audiences, now,
                MAX_ASSERTION_LIFETIME,
            )  # fmt: skip
        except InvalidClientAssertion as e:
            await self._refuse(found, f"assertion_{e.reason}")
        remember = datetime.fromtimestamp(checked.exp, UTC)
        async with self._storage.begin() as uow:
            fresh = await uow.clients.claim_proof_jti(
                f"jwt-bearer:{found.id}:{checked.jti}", remember
            )
            await uow.commit()
        if not fresh:
            await self._refuse(found, "assertion_replay")
        return found

    async def _refuse(self, client: Client | None, reason: str) -> NoReturn:
        failed = ClientAuthFailed(
            None if client is None else client.id, None if client is None else client.org_id, reason
        )
        await publish_failure(self._storage, self._bus, self._clock.now(), failed)
        raise OAuthError("invalid_client", "client authentication failed", 401)
