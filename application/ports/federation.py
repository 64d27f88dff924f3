"""Ports of login with other identity providers (docs/reference/federation.md): the stored
identities and started logins (``FederatedIdentityRepo``, in a unit of work) and the provider client
(``UpstreamClient``) and its probes' last word (``ProviderProbes``). See ``application.ports`` for
the conventions every port follows."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Literal, Protocol

import attrs

from domain.federation import FederatedIdentity, FederationFlow, UpstreamIdentity, UpstreamProvider


class FederatedIdentityRepo(Protocol):
    """Identities keyed by (``issuer``, ``subject``), at most one per user and provider, and
    the started logins (``FederationFlow``), inside one unit of work. A user's identities go
    with it (``ON DELETE CASCADE``)."""

    async def add(self, identity: FederatedIdentity) -> None:
        """Store it. Raises ``Conflict`` when (issuer, subject) is linked already (to any
        user) or the user has an identity of that provider, ``NotFound`` without the user."""
        ...

    async def find(self, issuer: str, subject: str) -> FederatedIdentity | None:
        """The identity (``issuer``, ``subject``), or None."""
        ...

    async def list_for_user(self, user_id: str) -> list[FederatedIdentity]:
        """The user's identities, oldest link first."""
        ...

    async def record_use(self, issuer: str, subject: str, email: str | None, at: datetime) -> None:
        """A login with it at ``at``: ``last_used_at`` and the email the provider said now."""
        ...

    async def delete(self, user_id: str, provider: str) -> FederatedIdentity | None:
        """Unlink the user's identity of ``provider``; the removed identity or None."""
        ...

    async def remove_unproven(self, user_id: str) -> list[FederatedIdentity]:
        """Unlink every identity of the user linked while its email was not verified
        (``email_was_verified`` false); the removed identities."""
        ...

    async def spend_nonce(
        self, issuer: str, nonce_hash: str, expires_at: datetime, now: datetime
    ) -> bool:
        """Remember (``issuer``, ``nonce_hash``) until ``expires_at``: True the first time,
        False while a remembered one is live at ``now`` (a replay; atomic across instances)."""
        ...

    async def put_flow(self, flow: FederationFlow) -> None:
        """Store a started login. Raises ``Conflict`` if its state hash exists."""
        ...

    async def take_flow(self, state_hash: str, browser_hash: str) -> FederationFlow | None:
        """Remove and return the started login bound to ``browser_hash`` (single use: a second
        take gets None), expired or not (the caller checks ``expires_at``). Another browser's
        take gets None and leaves it in place."""
        ...

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit`` of each) the started logins and remembered nonces expired
        by ``now``; how many."""
        ...


class FederationFailed(Exception):
    """A check of docs/reference/federation.md failed (the provider unreachable or answering badly,
    the code exchange refused, an ID token or userinfo answer that fails validation).
    ``reason`` is a short code for logs and audit (``id_token_invalid``, ``nonce_mismatch``,
    ``userinfo_sub_mismatch``, ``exchange_failed``, ``discovery_failed`` ...); never a secret
    or a token."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


class UpstreamClient(Protocol):
    """The client of the upstream providers: OIDC discovery (cached), JWKS (cached, fetched
    again once on an unknown ``kid``), the code exchange with PKCE, ID token validation with a
    JOSE library, userinfo; GitHub's OAuth 2.0 and user API. Every failure raises
    ``FederationFailed``."""

    async def authorization_url(
        self, provider: UpstreamProvider, redirect_uri: str, state: str, nonce: str,
        code_challenge: str,
    ) -> str:  # fmt: skip
        """The URL to send the browser to (``response_type=code``, ``scope``, ``state``,
        ``nonce``, ``code_challenge`` with ``code_challenge_method=S256``)."""
        ...

    async def announces_iss(self, provider: UpstreamProvider) -> bool:
        """Whether the provider sends ``iss`` in its authorization response (RFC 9207,
        ``authorization_response_iss_parameter_supported``)."""
        ...

    async def redeem(
        self, provider: UpstreamProvider, code: str, code_verifier: str, redirect_uri: str,
        nonce: str,
    ) -> UpstreamIdentity:  # fmt: skip
        """Exchange ``code`` with the PKCE ``code_verifier``, validate the ID token (``nonce``
        required and equal) and userinfo (``sub`` equal); GitHub: ``/user`` and
        ``/user/emails`` (verified entries only)."""
        ...

    async def verify_id_token(
        self, provider: UpstreamProvider, id_token: str, nonce: str | None
    ) -> UpstreamIdentity:
        """Validate an ID token a native app got itself (``nonce`` compared as given: a token
        with a nonce and none given, or the reverse, fails). Only for ``oidc`` providers."""
        ...

    async def check(self, provider: UpstreamProvider) -> None:
        """Load (and cache) the discovery document: raises ``FederationFailed`` when the
        provider cannot be reached or its ``issuer`` differs from the configured one."""
        ...


ProbeState = Literal["reachable", "unreachable", "checking"]
"""A provider's readiness: its discovery answered, failed, or no probe has ended yet."""


@attrs.frozen
class ProviderProbe:
    """One enabled provider's last probe (docs/reference/federation.md, readiness component
    ``federation``): its ``state`` and, when unreachable, the ``error`` (a reason and detail,
    never a secret)."""

    state: ProbeState
    error: str = ""


class ProviderProbes(Protocol):
    """Whether each enabled identity provider answered its discovery, probed in the background
    (never waiting on a provider longer than a second or so)."""

    async def probes(self) -> Mapping[str, ProviderProbe]:
        """The last probe of each enabled provider in force, by its ``id`` (``checking`` until
        one ends, or when its issuer changed since). Never raises."""
        ...
