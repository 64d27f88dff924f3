"""Login with other identity providers (docs/reference/federation.md): the upstream provider as the
provider client sees it, what it says about the user, a stored identity and a login flow.

An identity is the pair (``issuer``, ``subject``) — the only stable key of OpenID Connect Core
§5.7 — never the email.
"""

from __future__ import annotations

from datetime import datetime

import attrs

__all__ = ["FederatedIdentity", "FederationFlow", "UpstreamIdentity", "UpstreamProvider"]

GITHUB = "github"
OIDC = "oidc"


@attrs.frozen
class UpstreamProvider:
    """One configured provider as its client needs it: ``id`` (``[a-z0-9-]{1,32}``), ``kind``
    (``oidc`` | ``github``), ``issuer`` (OIDC: discovery at
    ``{issuer}/.well-known/openid-configuration``; GitHub: ``github_url``), ``client_id``,
    ``client_secret`` (never logged: ``repr`` leaves it out) or ``client_secret_file`` (read on
    use), ``scopes``, and GitHub's web and API base URLs (configurable for tests)."""

    id: str
    kind: str
    issuer: str
    client_id: str
    client_secret: str = attrs.field(default="", repr=False)
    client_secret_file: str = ""
    scopes: tuple[str, ...] = ("openid", "email", "profile")
    github_url: str = "https://github.com"
    github_api_url: str = "https://api.github.com"


@attrs.frozen
class UpstreamIdentity:
    """What a provider proved about its user: ``issuer`` and ``subject`` (the identity),
    ``email`` (or None), ``email_verified`` (True only when the provider said exactly ``true``;
    GitHub: the primary verified address), ``name`` (or None); from an ID token, its ``iat``
    and ``exp`` (``issued_at``, ``expires_at``; None otherwise)."""

    issuer: str
    subject: str
    email: str | None = None
    email_verified: bool = False
    name: str | None = None
    issued_at: datetime | None = None
    expires_at: datetime | None = None


@attrs.frozen
class FederatedIdentity:
    """A stored link: the user ``user_id`` signs in as (``issuer``, ``subject``) at the
    configured provider ``provider``; ``email`` as the provider last said it (or None);
    ``linked_at``; ``last_used_at`` (the latest login with it, or None);
    ``email_was_verified``: whether the user's local email was verified when it was linked —
    one linked while it was not is removed when the owner first proves the email
    (Sudhodanan & Paverd 2022, "Pre-hijacked accounts"; ``docs/adr/0034-federated-login.md``)."""

    issuer: str
    subject: str
    provider: str
    user_id: str
    email: str | None
    linked_at: datetime
    last_used_at: datetime | None = None
    email_was_verified: bool = False


@attrs.frozen
class FederationFlow:
    """One started login at a provider (the ``state`` record of docs/reference/federation.md): keyed
    by the SHA-256 hex of ``state``; ``browser_hash``: SHA-256 hex of the browser cookie it is bound
    to; the ``nonce`` and PKCE ``code_verifier`` sent with it; where to go after (``return_to``, a
    path of this service); ``link_user_id``: the signed-in user linking this provider (None: a
    login); single use, until ``expires_at`` (≤ 10 minutes). ``upstream``: set on a link whose
    callback proved this identity and that waits for the user's confirmation (its key is then the
    SHA-256 hex of the confirmation's token)."""

    state_hash: str
    provider: str
    browser_hash: str
    nonce: str
    code_verifier: str = attrs.field(repr=False)
    return_to: str
    link_user_id: str | None
    created_at: datetime
    expires_at: datetime
    upstream: UpstreamIdentity | None = None
    invitation_hash: str | None = None
    """The SHA-256 hex of the invitation link's token when this login accepts an invitation
    (docs/reference/invitations.md): the new account is the invitation's."""
