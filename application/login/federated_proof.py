"""A fresh proof of a signed-in user by one of its linked providers
(``docs/reference/mfa-and-passkeys.md``: adding a factor needs a fresh proof; ASVS 5.0 V7.5.1): an
ID token of that provider, checked as ``POST /login/federated`` checks it — signature, ``iss``,
``aud``, ``exp``, the ``nonce`` given as is and spent once per issuer until ``exp``, ``iat`` at most
300 s old — whose (issuer, ``sub``) is an identity linked to that user. So a federated-only user (no
password, no passkey) can turn on TOTP or add a passkey."""

from __future__ import annotations

import hashlib
import logging

import attrs

from application.federation.settings import FederationSettings
from application.ports import Clock, FederationFailed, Storage, UpstreamClient
from application.shared.settings import Live
from domain.login import native_id_token_refusal

__all__ = ["FederatedProof"]

log = logging.getLogger("authsvc.federation")


@attrs.frozen
class FederatedProof:
    """``FederatedProof(storage, client, clock, federation_settings)``; implements
    ``application.shared.reauth.FederatedCheck``."""

    _storage: Storage
    _client: UpstreamClient
    _clock: Clock
    _federation: Live[FederationSettings]

    async def belongs_to(self, user_id: str, provider_id: str, id_token: str, nonce: str) -> bool:
        """True when ``id_token`` (at most 16 KiB), with ``nonce`` (at most 512 characters),
        is a fresh ID token of the enabled provider ``provider_id`` for an identity linked to
        ``user_id``; the nonce is then spent. False for anything else (never raises for the
        token's faults; raises what the storage raises)."""
        provider = self._federation.current.provider(provider_id[:64])
        if provider is None or not nonce or len(nonce) > 512 or len(id_token) > 16_384:
            return False
        try:
            who = await self._client.verify_id_token(provider.upstream(), id_token, nonce)
        except FederationFailed as exc:
            log.info("federation %s: re-authentication refused: %s", provider_id, exc.reason)
            return False
        now = self._clock.now()
        if native_id_token_refusal(who.issued_at, who.expires_at, now) is not None:
            return False
        assert who.expires_at is not None  # native_id_token_refusal checked it
        async with self._storage.begin() as uow:
            known = await uow.identities.find(who.issuer, who.subject)
            if known is None or known.user_id != user_id or known.provider != provider.id:
                return False
            digest = hashlib.sha256(nonce.encode()).hexdigest()
            fresh = await uow.identities.spend_nonce(who.issuer, digest, who.expires_at, now)
            await uow.commit()
        return fresh
