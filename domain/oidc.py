"""OpenID Connect provider records and pure rules (docs/reference/oauth-and-oidc.md).

Records: ``AuthorizationCode`` (a code as stored, by its hash), ``Consent`` (what a user let a
client have), ``HostedSession`` (the browser's login at the provider). Rules: which redirect
URIs may be registered (``redirect_uri_problem``, RFC 8252 §7, OAuth 2.1 §2.3 / §7.5), how a
presented one matches a registered one (``redirect_uri_matches``, RFC 8252 §7.3), and the PKCE
S256 check (``pkce_s256_matches``, RFC 7636 §4.6). Standard library and attrs only.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import re
from datetime import datetime
from urllib.parse import SplitResult, urlsplit

import attrs

OIDC_SCOPES = ("openid", "profile", "email", "offline_access")
"""The OpenID Connect scopes any code-flow client may request (docs/reference/oauth-and-oidc.md)."""
IGNORED_SCOPES = ("address", "phone")
"""Standard OIDC scopes authsvc does not serve: dropped from a request, never refused."""
PKCE_CHALLENGE = re.compile(r"^[A-Za-z0-9_-]{43}$")
"""An S256 ``code_challenge``: BASE64URL(SHA-256(verifier)) without padding, 43 characters
(RFC 7636 §4.2)."""
PKCE_VERIFIER = re.compile(r"^[A-Za-z0-9._~-]{43,128}$")
"""A ``code_verifier``: 43 to 128 unreserved characters (RFC 7636 §4.1)."""
MAX_REDIRECT_URI_LENGTH = 2000
"""The longest redirect URI that may be registered, in characters."""

_PRIVATE_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+$")
"""A private-use URI scheme (RFC 8252 §7.1): a reverse domain name, so it holds a period."""
_LOOPBACK_LITERALS = ("127.0.0.1", "::1")


@attrs.frozen
class AuthorizationCode:
    """An authorization code as stored (docs/reference/oauth-and-oidc.md): single use, about 60 s.

    ``code_hash``: SHA-256 hex (64 lower-case characters) of the clear code, which only the
    client's redirect ever carries. Bound to ``client_id``, ``redirect_uri`` (exactly as
    presented at /oauth/authorize), ``code_challenge`` (S256, ``PKCE_CHALLENGE``), ``nonce``
    (None when not sent), the granted ``scopes`` and the login: ``session_id`` (the hosted
    session's ``sessions`` row id, the ID token's ``sid``), ``auth_time``, ``amr`` (RFC 8176),
    ``acr`` (``"1"`` or ``"2"``). ``used_at``: when it was exchanged (None: unused);
    ``family_id``: the token family (``sessions`` row) issued from it, so a reuse can revoke it
    (RFC 9700 §4.2.4). Times are timezone-aware UTC.
    """

    code_hash: str
    client_id: str
    user_id: str
    redirect_uri: str
    code_challenge: str
    nonce: str | None
    scopes: tuple[str, ...]
    session_id: str
    auth_time: datetime
    amr: tuple[str, ...]
    acr: str
    created_at: datetime
    expires_at: datetime
    used_at: datetime | None = None
    family_id: str | None = None

    def is_expired(self, now: datetime) -> bool:
        """True when ``now`` is at or past ``expires_at``."""
        return now >= self.expires_at


@attrs.frozen
class Consent:
    """What ``user_id`` allowed ``client_id``: the ``scopes`` granted so far (a union over
    every grant), ``granted_at`` the latest grant (UTC). A request within ``scopes`` needs no
    consent page (docs/reference/oauth-and-oidc.md)."""

    user_id: str
    client_id: str
    scopes: tuple[str, ...]
    granted_at: datetime

    def covers(self, scopes: tuple[str, ...] | list[str]) -> bool:
        """True when every one of ``scopes`` was granted."""
        return set(scopes) <= set(self.scopes)


@attrs.frozen
class HostedSession:
    """The browser's login at the provider (the ``__Host-authsvc_session`` cookie).

    ``id_hash``: SHA-256 hex of the cookie's opaque value. ``session_id``: its row in
    ``sessions`` (one of the user's sessions of docs/reference/tokens-and-sessions.md: it ends with
    that row at logout, password change, disable, delete or DELETE /me/sessions/{id}).
    ``auth_time``, ``amr``, ``acr``: the login (copied into each code). ``idle_expires_at``: dead
    when not used before it (``oidc.session_idle_ttl``, moved on by ``touch``); ``expires_at``: the
    absolute end (``oidc.session_ttl``).
    """

    id_hash: str
    session_id: str
    user_id: str
    auth_time: datetime
    amr: tuple[str, ...]
    acr: str
    idle_expires_at: datetime
    expires_at: datetime

    def is_expired(self, now: datetime) -> bool:
        """True when ``now`` is at or past the idle or the absolute end."""
        return now >= self.idle_expires_at or now >= self.expires_at


def _split(uri: str) -> SplitResult | None:
    try:
        return urlsplit(uri)
    except ValueError:  # e.g. an unbalanced "[" in the host
        return None


def _is_loopback_ip(host: str | None) -> bool:
    return host in _LOOPBACK_LITERALS


def loopback_http(url: str) -> bool:
    """Whether ``url`` is ``http://`` on a loopback host (``localhost``, 127.0.0.0/8, ``::1``):
    the one place plain HTTP is allowed (RFC 8252 §7.3), for issuers, providers and cookies."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        return False
    if parts.hostname == "localhost":
        return True
    try:
        return ipaddress.ip_address(parts.hostname).is_loopback
    except ValueError:
        return False


def redirect_uri_problem(uri: str) -> str | None:
    """Why ``uri`` cannot be registered as a redirect URI, or None when it can.

    Allowed (docs/reference/oauth-and-oidc.md; RFC 8252 §7; OAuth 2.1 §2.3.1): an absolute ``https``
    URI with a host; ``http`` only on a loopback host (the IP literals ``127.0.0.1`` / ``[::1]``, or
    ``localhost``); a private-use scheme that is a reverse domain name (``com.example.app:/cb``).
    Never a fragment, user information, white space or control characters; at most
    ``MAX_REDIRECT_URI_LENGTH`` characters. The reason is a short English phrase for a 422 field
    error.
    """
    if not uri or len(uri) > MAX_REDIRECT_URI_LENGTH:
        return f"must be 1 to {MAX_REDIRECT_URI_LENGTH} characters"
    if not uri.isprintable() or not uri.isascii() or any(c.isspace() for c in uri):
        return "must be printable ASCII without spaces"
    if "#" in uri:
        return "must not hold a fragment"
    parts = _split(uri)
    if parts is None or not parts.scheme:
        return "must be an absolute URI"
    scheme = parts.scheme.lower()
    if scheme in ("https", "http"):
        try:
            host = parts.hostname
            parts.port  # noqa: B018 - raises ValueError on a port out of range
        except ValueError:
            return "must have a valid host and port"
        if not host or not parts.netloc:
            return "must name a host"
        if "@" in parts.netloc:
            return "must not hold user information"
        if scheme == "http" and not (_is_loopback_ip(host) or host == "localhost"):
            return "must use https (http only on 127.0.0.1, [::1] or localhost)"
        return None
    if not _PRIVATE_SCHEME.fullmatch(scheme):
        return (
            "must use https, http on a loopback host, or a private-use scheme like com.example.app"
        )
    if parts.netloc:
        return "a private-use scheme takes no authority (com.example.app:/path)"
    return None


def _loopback_any_port(uri: str) -> tuple[str, str, str, str] | None:
    """For an ``http`` URI on a loopback IP literal: (host, path, query, scheme) without the
    port, else None."""
    parts = _split(uri)
    if parts is None or parts.scheme.lower() != "http":
        return None
    try:
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a port out of range
    except ValueError:
        return None
    if not _is_loopback_ip(host) or "@" in parts.netloc:
        return None
    assert host is not None
    return (host, parts.path, parts.query, "http")


def redirect_uri_matches(registered: str, presented: str) -> bool:
    """True when ``presented`` is the ``registered`` redirect URI: an exact string match, except
    that on ``http`` loopback IP literals (``127.0.0.1``, ``[::1]``) any port matches (RFC 8252
    §7.3: the native app picks a free port); ``localhost`` must match exactly, port included."""
    if hmac.compare_digest(registered.encode(), presented.encode()):
        return True
    left = _loopback_any_port(registered)
    return left is not None and left == _loopback_any_port(presented)


def pkce_s256_challenge(verifier: str) -> str:
    """BASE64URL(SHA-256(ASCII(verifier))) without padding (RFC 7636 §4.2)."""
    digest = hashlib.sha256(verifier.encode("ascii", "replace")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def pkce_s256_matches(challenge: str, verifier: str) -> bool:
    """True when ``verifier`` is a well-formed ``code_verifier`` (``PKCE_VERIFIER``) whose S256
    transform equals ``challenge``, compared in constant time (RFC 7636 §4.6)."""
    if not PKCE_VERIFIER.fullmatch(verifier):
        return False
    return hmac.compare_digest(pkce_s256_challenge(verifier).encode(), challenge.encode("utf-8"))
