"""Events of the OAuth client registry (docs/reference/oauth-and-oidc.md). Ids and field names only:
never a client secret or its hash."""

from __future__ import annotations

import attrs

from application.events.catalog import Event

__all__ = [
    "AccessTokenRevoked",
    "ClientAuthFailed",
    "ClientCreated",
    "ClientDeleted",
    "ClientSecretRotated",
    "ClientTokenIssued",
    "ClientUpdated",
    "DpopProofRefused",
]


@attrs.frozen
class ClientCreated(Event):
    """The client ``client_id`` of ``org_id`` was registered by ``actor_id``."""

    client_id: str
    org_id: str
    actor_id: str


@attrs.frozen
class ClientUpdated(Event):
    """``actor_id`` changed ``fields`` (names, comma-separated) of the client ``client_id``."""

    client_id: str
    org_id: str
    actor_id: str
    fields: str


@attrs.frozen
class ClientSecretRotated(Event):
    """``actor_id`` gave the client ``client_id`` a new secret; the previous one works for
    ``grace`` more seconds (0: not at all)."""

    client_id: str
    org_id: str
    actor_id: str
    grace: int


@attrs.frozen
class ClientDeleted(Event):
    """``actor_id`` deleted the client ``client_id``; its live tokens are inactive at once."""

    client_id: str
    org_id: str
    actor_id: str


@attrs.frozen
class ClientTokenIssued(Event):
    """An access token ``jti`` (RFC 9068) was issued to ``client_id`` by the client credentials
    grant, signed with ``algorithm``, for ``scope`` (space-separated). Never the token."""

    client_id: str
    org_id: str
    jti: str
    algorithm: str
    scope: str


@attrs.frozen
class ClientAuthFailed(Event):
    """A client failed to authenticate at an OAuth endpoint (RFC 6749 §2.3): ``client_id`` as
    presented when it names a client (else None), ``reason`` (``unknown_client``,
    ``wrong_secret``, ``disabled``, ``malformed``). Never the secret."""

    client_id: str | None
    org_id: str | None
    reason: str


@attrs.frozen
class AccessTokenRevoked(Event):
    """``client_id`` revoked its access token ``jti`` (RFC 7009)."""

    client_id: str
    org_id: str
    jti: str


@attrs.frozen
class DpopProofRefused(Event):
    """A DPoP proof presented by ``client_id`` at the token endpoint was refused for ``reason``
    (``InvalidDpopProof.reason``, ``missing`` or ``replay``). Never the proof."""

    client_id: str
    reason: str
