"""OAuth 2.1 for machines (docs/reference/oauth-and-oidc.md): the client credentials grant (RFC 6749
§4.4) with RFC 9068 access tokens (revocation, RFC 7009, and introspection, RFC 7662, are in
``application.oauth.token_status``).

Every endpoint first authenticates the calling client (``client_secret_basic`` or
``client_secret_post``, RFC 6749 §2.3.1; the HTTP driver hands over the id and secret): the
secret's SHA-256 is compared in constant time with the stored hash (and with the previous one
during its grace); an unknown client costs the same comparison. Errors are ``OAuthError``: the
driver renders them as RFC 6749 §5.2 JSON, not problem+json.
"""

from __future__ import annotations

import base64
import hmac
import re
from datetime import UTC, datetime
from typing import Any, NoReturn

import attrs

from application.events.audit import publish_failure, record
from application.events.clients import (
    ClientAuthFailed,
    ClientTokenIssued,
    DpopProofRefused,
)
from application.ports import (
    Clock,
    DpopProof,
    DpopVerifier,
    EventBus,
    SecretSealer,
    Signer,
    Storage,
)
from application.shared.settings import AuthSettings, Live, OAuthSettings
from application.shared.steps import hash_token, new_id
from domain.clients import Client
from domain.errors import InvalidDpopProof

__all__ = [
    "CLIENT_TOKEN_TYPE",
    "ClientAuthenticator",
    "ClientCredentialsGrant",
    "OAuthError",
    "TokenResponse",
]

CLIENT_TOKEN_TYPE = "at+jwt"  # noqa: S105 - a media type, not a secret
"""The JWS ``typ`` of a client's access token (RFC 9068 §2.1); user tokens are ``JWT``."""
_CLIENT_ID = re.compile(r"[0-9a-f]{32}")
_DUMMY_HASH = hash_token("no client has this secret")
_MAX_SECRET_LENGTH = 512
DPOP_WINDOW = 60
"""Seconds a DPoP proof's ``iat`` may be off from now, either way
(docs/reference/oauth-and-oidc.md); its ``jti`` is remembered that long after ``iat`` to refuse a
replay."""


class OAuthError(Exception):
    """An error of an OAuth endpoint (RFC 6749 §5.2): ``error`` (``invalid_request``,
    ``invalid_client``, ``unsupported_grant_type``, ``invalid_scope``, ``invalid_target``,
    ``invalid_dpop_proof``...), a human ``description``, the HTTP ``status`` (400; 401 for
    ``invalid_client``, answered with ``WWW-Authenticate: Basic realm="authsvc"``), and for
    ``use_dpop_nonce`` the ``nonce`` to send in ``DPoP-Nonce``."""

    def __init__(
        self, error: str, description: str, status: int = 400, nonce: str | None = None
    ) -> None:
        super().__init__(description)
        self.error = error
        self.description = description
        self.status = status
        self.nonce = nonce


def _invalid_client() -> OAuthError:
    return OAuthError("invalid_client", "client authentication failed", 401)


@attrs.frozen
class ClientAuthenticator:
    """Authenticates a client by id and secret (RFC 6749 §2.3.1).

    ``await authenticate(client_id, secret)`` returns the enabled ``Client``; anything else
    (unknown id, wrong secret, disabled client, a public client: it has no secret) raises
    ``OAuthError("invalid_client")`` (401) after recording ``client.auth_failed`` and
    publishing ``ClientAuthFailed`` (the presented id only when it names a client; never the
    secret).
    """

    _storage: Storage
    _bus: EventBus
    _clock: Clock

    async def authenticate(self, client_id: str, secret: str) -> Client:
        """The client ``client_id`` if ``secret`` is its secret and it is enabled."""
        client = None
        if _CLIENT_ID.fullmatch(client_id):
            async with self._storage.read() as uow:
                client = await uow.clients.get(client_id)
        now = self._clock.now()
        presented = hash_token(secret[:_MAX_SECRET_LENGTH])
        hashes = client.secret_hashes(now) if client is not None else (_DUMMY_HASH,)
        matched = False
        for stored in hashes:  # every hash compared: no early exit to time
            matched |= hmac.compare_digest(presented, stored)
        matched &= client is not None and not client.public  # a public client has no secret
        if client is None or not matched or client.disabled:
            reason = (
                "unknown_client"
                if client is None
                else "wrong_secret"
                if not matched
                else "disabled"
            )
            failed = ClientAuthFailed(
                None if client is None else client.id,
                None if client is None else client.org_id,
                reason,
            )
            await publish_failure(self._storage, self._bus, now, failed)
            raise _invalid_client()
        return client


@attrs.frozen
class TokenResponse:
    """RFC 6749 §5.1: ``access_token`` (RFC 9068 JWT), ``token_type`` (``Bearer`` or
    ``DPoP``), ``expires_in`` (s), ``scope`` (space-separated); ``dpop_nonce``: the nonce to
    send in ``DPoP-Nonce`` (with ``oauth.dpop_nonce``)."""

    access_token: str = attrs.field(repr=False)
    token_type: str
    expires_in: int
    scope: str
    dpop_nonce: str | None = None


DPOP_NONCE_PERIOD = 60
"""Seconds per DPoP nonce: the current one and the previous one are accepted."""


def dpop_nonce(sealer: SecretSealer, now: datetime, periods_ago: int = 0) -> str:
    """The server's DPoP nonce (RFC 9449 §8) of the period ``periods_ago`` before ``now``:
    a MAC of the period's number, so every instance sharing the sealing key issues and accepts
    the same nonces without storing them. 43 base64url characters."""
    period = int(now.timestamp()) // DPOP_NONCE_PERIOD - periods_ago
    mac = sealer.mac(f"authsvc dpop nonce {period}".encode("ascii"))
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode("ascii")


def _granted_scopes(client: Client, scope: str | None) -> tuple[str, ...]:
    if scope is None:
        return client.scopes
    asked = tuple(dict.fromkeys(scope.split(" ")))
    if not scope or "" in asked or not set(asked) <= set(client.scopes):
        raise OAuthError("invalid_scope", "the scope is not one this client may ask for")
    return asked


def _audience(client: Client, resource: str | None) -> str:
    if resource is None:
        return client.audience[0]
    if resource not in client.audience:
        raise OAuthError("invalid_target", "the resource is not an audience of this client")
    return resource


@attrs.frozen
class ClientCredentialsGrant:
    """POST /oauth/token ``grant_type=client_credentials`` (RFC 6749 §4.4;
    docs/reference/oauth-and-oidc.md).

    After ``ClientAuthenticator`` (a public client is ``invalid_client``), a client whose
    ``grant_types`` lack ``client_credentials`` is ``unauthorized_client``; ``scope``
    (space-separated, optional) must be a subset of the
    client's scopes (``invalid_scope``; absent: all of them); ``resource`` (RFC 8707, optional)
    one of its audiences (``invalid_target``; absent: the first). With a DPoP ``proof``
    (RFC 9449) for ``POST`` at one of ``urls`` (the endpoint's URL under ``auth.issuer``),
    checked by the ``DpopVerifier`` and its ``jti`` claimed once in the database, the token is
    bound to the proof's key (``cnf.jkt``) and its type is ``DPoP``; a bad or replayed proof,
    or none from a client with ``require_dpop``, is ``invalid_dpop_proof``
    (``DpopProofRefused`` published); with ``oauth.dpop_nonce`` a proof without the current
    (or previous) server nonce is ``use_dpop_nonce``, with the nonce
    to use. Signs an RFC 9068 token
    (``typ: at+jwt``; ``iss, sub = client_id, client_id, aud, scope, org_id, iat, exp, jti``
    [+ ``cnf``]; lifetime ``oauth.client_token_ttl`` s) with the user tokens' keys; records
    ``client.token_issued`` and publishes ``ClientTokenIssued``.
    """

    _storage: Storage
    _bus: EventBus
    _clock: Clock
    _signer: Signer
    _auth: Live[AuthSettings]
    _oauth: Live[OAuthSettings]
    _authenticator: ClientAuthenticator
    _dpop: DpopVerifier
    _sealer: SecretSealer

    async def __call__(
        self,
        client_id: str,
        secret: str,
        scope: str | None,
        resource: str | None,
        proof: str | None = None,
        urls: tuple[str, ...] = (),
        client: Client | None = None,
    ) -> TokenResponse:
        """A token for the client ``client_id`` (bound to ``proof``'s key when given); ``client``:
        the client a ``private_key_jwt`` assertion already authenticated (RFC 7523 §2.2; then
        ``secret`` is not looked at)."""
        if client is None:
            client = await self._authenticator.authenticate(client_id, secret)
        if "client_credentials" not in client.grant_types:
            raise OAuthError("unauthorized_client", "the client may not use this grant type")
        scopes = _granted_scopes(client, scope)
        audience = _audience(client, resource)
        now = self._clock.now()
        bound = None if proof is None else await self._checked_proof(client, proof, urls, now)
        if bound is None and client.require_dpop:
            await self._refuse(client, "missing")
        ttl = self._oauth.current.client_token_ttl
        iat = int(now.timestamp())
        jti = new_id()
        granted = " ".join(scopes)
        claims: dict[str, Any] = {
            "iss": self._auth.current.issuer, "sub": client.id, "client_id": client.id,
            "aud": audience, "scope": granted, "org_id": client.org_id,
            "iat": iat, "exp": iat + ttl, "jti": jti,
        }  # fmt: skip
        if bound is not None:
            claims["cnf"] = {"jkt": bound.jkt}
        chosen = self._auth.current.algorithm_for(audience, client.access_token_signed_response_alg)
        alg = self._signer.signing_algorithm(chosen)
        token = await self._signer.sign(claims, typ=CLIENT_TOKEN_TYPE, alg=alg)
        issued = ClientTokenIssued(client.id, client.org_id, jti, alg, granted)
        async with self._storage.begin() as uow:
            await record(uow, [issued], now)
            await uow.commit()
        await self._bus.publish(issued)
        nonce = dpop_nonce(self._sealer, now) if self._oauth.current.dpop_nonce else None
        return TokenResponse(token, "Bearer" if bound is None else "DPoP", ttl, granted, nonce)

    async def checked_proof(self, client: Client, proof: str, urls: tuple[str, ...]) -> str:
        """The thumbprint (``jkt``) of a DPoP ``proof`` for ``POST`` at one of ``urls``, checked
        as for this grant (its ``jti`` claimed once, the server nonce when required); raises
        ``OAuthError`` (``invalid_dpop_proof``, ``use_dpop_nonce``). For the code flow's
        grants (docs/reference/oauth-and-oidc.md)."""
        return (await self._checked_proof(client, proof, urls, self._clock.now())).jkt

    async def _checked_proof(
        self, client: Client, proof: str, urls: tuple[str, ...], now: datetime
    ) -> DpopProof:
        try:
            checked = self._dpop.verify(proof, "POST", urls, now, DPOP_WINDOW)
        except InvalidDpopProof as e:
            await self._refuse(client, e.reason)
        if self._oauth.current.dpop_nonce:
            current = dpop_nonce(self._sealer, now)
            valid = (current, dpop_nonce(self._sealer, now, 1))
            if checked.nonce is None or not any(
                hmac.compare_digest(checked.nonce, n) for n in valid
            ):
                await self._bus.publish(DpopProofRefused(client.id, "nonce"))
                raise OAuthError("use_dpop_nonce", "the DPoP proof needs this nonce", 400, current)
        remember = datetime.fromtimestamp(max(checked.iat, int(now.timestamp())) + DPOP_WINDOW, UTC)
        async with self._storage.begin() as uow:
            fresh = await uow.clients.claim_proof_jti(f"{checked.jkt}:{checked.jti}", remember)
            await uow.commit()
        if not fresh:
            await self._refuse(client, "replay")
        return checked

    async def _refuse(self, client: Client, reason: str) -> NoReturn:
        await self._bus.publish(DpopProofRefused(client.id, reason))
        raise OAuthError("invalid_dpop_proof", f"the DPoP proof was refused ({reason})")
