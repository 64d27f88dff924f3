"""``UpstreamClient`` on aiohttp's client and PyJWT (docs/reference/federation.md; research §4.2).

OIDC: discovery from ``{issuer}/.well-known/openid-configuration`` (cached ``DISCOVERY_TTL``;
its ``issuer`` must equal the configured one exactly, OIDC Discovery §4.3; its token,
userinfo and JWKS endpoints ``https``, or ``http`` on a loopback host, else
``discovery_insecure``), the JWK Set (cached; fetched again on an unknown ``kid``, at most
once per ``JWKS_REFETCH_INTERVAL`` per set, so a storm of unknown kids cannot make us hammer
the provider), the code exchange with the PKCE verifier (``client_secret_basic``, or
``client_secret_post`` when that is all the provider announces), ID token validation
(``adapters.federation.id_tokens``) and userinfo, whose ``sub`` must equal the ID token's
(§5.3.4). GitHub: the OAuth 2.0 exchange, then ``/user`` and ``/user/emails`` (only
``verified`` addresses; the primary one first).
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import aiohttp
import attrs

from adapters.federation.id_tokens import allowed_algorithm, choose_key, header_of, validate
from application.ports import FederationFailed, UpstreamClient
from domain.federation import GITHUB, UpstreamIdentity, UpstreamProvider
from domain.oidc import loopback_http

__all__ = ["DISCOVERY_TTL", "JWKS_REFETCH_INTERVAL", "HttpUpstreamClient"]

DISCOVERY_TTL = 3600.0
"""Seconds a discovery document (and its JWK Set) is reused."""
JWKS_REFETCH_INTERVAL = 10.0
"""At most one JWK Set fetch per set per this many seconds for unknown ``kid`` values."""
TIMEOUT = aiohttp.ClientTimeout(total=10)
_MAX_BODY = 1 << 20


class HttpUpstreamClient(UpstreamClient):
    """The provider client; one per process (its caches are per issuer and JWKS URI).
    ``close()`` releases its connections."""

    def __init__(self, clock: Any = time.monotonic) -> None:
        self._clock = clock
        self._session: aiohttp.ClientSession | None = None
        self._discovery: dict[str, tuple[float, dict[str, Any]]] = {}
        self._jwks: dict[str, tuple[float, dict[str, Any]]] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=TIMEOUT)
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def _json(self, method: str, url: str, reason: str, **kwargs: Any) -> Any:
        """The JSON answer of ``url``; ``FederationFailed(reason)`` for anything else."""
        try:
            async with self._http().request(method, url, allow_redirects=False, **kwargs) as r:
                body = await r.content.read(_MAX_BODY + 1)
                if r.status != 200 or len(body) > _MAX_BODY:
                    raise FederationFailed(reason, f"HTTP {r.status} from {url}")
                return json.loads(body)
        except (aiohttp.ClientError, TimeoutError, ValueError, UnicodeDecodeError) as exc:
            raise FederationFailed(reason, f"{type(exc).__name__} from {url}") from None

    async def discovery(self, provider: UpstreamProvider) -> dict[str, Any]:
        """The provider's discovery document (cached); raises ``FederationFailed``
        (``discovery_failed``, ``discovery_issuer_mismatch``)."""
        now = self._clock()
        cached = self._discovery.get(provider.issuer)
        if cached is not None and now - cached[0] < DISCOVERY_TTL:
            return cached[1]
        url = provider.issuer.rstrip("/") + "/.well-known/openid-configuration"
        doc = await self._json("GET", url, "discovery_failed")
        if not isinstance(doc, dict):
            raise FederationFailed("discovery_failed", "not a JSON object")
        if doc.get("issuer") != provider.issuer:
            raise FederationFailed("discovery_issuer_mismatch", "issuer differs from config")
        for name in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
            if not isinstance(doc.get(name), str):
                raise FederationFailed("discovery_failed", f"no {name}")
        for name in ("token_endpoint", "jwks_uri", "userinfo_endpoint"):
            if name in doc and not _secure_url(doc[name]):
                raise FederationFailed("discovery_insecure", f"{name} must be https")
        self._discovery[provider.issuer] = (now, doc)
        return doc

    async def check(self, provider: UpstreamProvider) -> None:
        """Discovery loads and names the configured issuer (GitHub: nothing to check)."""
        if provider.kind != GITHUB:
            await self.discovery(provider)

    async def announces_iss(self, provider: UpstreamProvider) -> bool:
        if provider.kind == GITHUB:
            return False
        doc = await self.discovery(provider)
        return doc.get("authorization_response_iss_parameter_supported") is True

    async def authorization_url(
        self, provider: UpstreamProvider, redirect_uri: str, state: str, nonce: str,
        code_challenge: str,
    ) -> str:  # fmt: skip
        params = {"response_type": "code", "client_id": provider.client_id,
                  "redirect_uri": redirect_uri, "scope": " ".join(provider.scopes),
                  "state": state, "code_challenge": code_challenge,
                  "code_challenge_method": "S256"}  # fmt: skip
        if provider.kind == GITHUB:
            endpoint = provider.github_url.rstrip("/") + "/login/oauth/authorize"
        else:
            endpoint = (await self.discovery(provider))["authorization_endpoint"]
            params["nonce"] = nonce
        joiner = "&" if "?" in endpoint else "?"
        return f"{endpoint}{joiner}{urlencode(params)}"

    @staticmethod
    def _secret(provider: UpstreamProvider) -> str:
        if provider.client_secret_file:
            try:
                return Path(provider.client_secret_file).expanduser().read_text("utf-8").strip()
            except OSError:
                raise FederationFailed("client_secret_unreadable") from None
        return provider.client_secret

    async def redeem(
        self, provider: UpstreamProvider, code: str, code_verifier: str, redirect_uri: str,
        nonce: str,
    ) -> UpstreamIdentity:  # fmt: skip
        if provider.kind == GITHUB:
            return await self._github(provider, code, code_verifier, redirect_uri)
        doc = await self.discovery(provider)
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri,
                "code_verifier": code_verifier}  # fmt: skip
        secret = self._secret(provider)
        methods = doc.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
        headers = {"Accept": "application/json"}
        if not secret:
            form["client_id"] = provider.client_id
        elif "client_secret_basic" in methods:  # RFC 6749 §2.3.1: each part form-encoded
            pair = f"{quote(provider.client_id, safe='')}:{quote(secret, safe='')}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        else:
            form |= {"client_id": provider.client_id, "client_secret": secret}
        tokens = await self._json("POST", doc["token_endpoint"], "exchange_failed", data=form,
                                  headers=headers)  # fmt: skip
        id_token = tokens.get("id_token") if isinstance(tokens, dict) else None
        if not isinstance(id_token, str):
            raise FederationFailed("exchange_failed", "no id_token")
        claims = await self._verify(provider, doc, id_token, nonce)
        email, verified = claims.get("email"), claims.get("email_verified") is True
        userinfo_url = doc.get("userinfo_endpoint")
        access = tokens.get("access_token")
        if isinstance(userinfo_url, str) and isinstance(access, str):
            info = await self._json("GET", userinfo_url, "userinfo_failed",
                                    headers={"Authorization": f"Bearer {access}"})  # fmt: skip
            if not isinstance(info, dict) or info.get("sub") != claims["sub"]:
                raise FederationFailed("userinfo_sub_mismatch")
            if email is None:
                email, verified = info.get("email"), info.get("email_verified") is True
        return _identity(provider.issuer, claims["sub"], email, verified, claims.get("name"))

    async def verify_id_token(
        self, provider: UpstreamProvider, id_token: str, nonce: str | None
    ) -> UpstreamIdentity:
        if provider.kind == GITHUB:
            raise FederationFailed("id_token_unsupported", "GitHub issues no ID tokens")
        doc = await self.discovery(provider)
        claims = await self._verify(provider, doc, id_token, nonce)
        verified = claims.get("email_verified") is True
        found = _identity(provider.issuer, claims["sub"], claims.get("email"), verified,
                          claims.get("name"))  # fmt: skip
        return attrs.evolve(found, issued_at=_time(claims.get("iat")),
                            expires_at=_time(claims.get("exp")))  # fmt: skip

    async def _verify(
        self, provider: UpstreamProvider, doc: dict[str, Any], token: str, nonce: str | None
    ) -> dict[str, Any]:
        header = header_of(token)
        alg = allowed_algorithm(header, doc.get("id_token_signing_alg_values_supported"))
        kid = header.get("kid")
        kid = kid if isinstance(kid, str) else None
        jwks_uri: str = doc["jwks_uri"]
        key = choose_key(await self._key_set(jwks_uri, refetch=False), kid, alg)
        if key is None and kid is not None:
            key = choose_key(await self._key_set(jwks_uri, refetch=True), kid, alg)
        if key is None:
            raise FederationFailed("id_token_kid", "no signing key for the token")
        return validate(token, key, alg, provider.issuer, provider.client_id, nonce)

    async def _key_set(self, uri: str, refetch: bool) -> dict[str, Any]:
        """The JWK Set at ``uri``: cached; ``refetch`` fetches it again unless that was done
        less than ``JWKS_REFETCH_INTERVAL`` seconds ago."""
        lock = self._locks.setdefault(uri, asyncio.Lock())
        async with lock:
            now = self._clock()
            cached = self._jwks.get(uri)
            if cached is not None:
                age = now - cached[0]
                if (not refetch and age < DISCOVERY_TTL) or (
                    refetch and age < JWKS_REFETCH_INTERVAL
                ):
                    return cached[1]
            keys = await self._json("GET", uri, "jwks_failed")
            if not isinstance(keys, dict):
                raise FederationFailed("jwks_failed", "not a JWK Set")
            self._jwks[uri] = (now, keys)
            return keys

    async def _github(
        self, provider: UpstreamProvider, code: str, verifier: str, redirect_uri: str
    ) -> UpstreamIdentity:
        url = provider.github_url.rstrip("/") + "/login/oauth/access_token"
        form = {"client_id": provider.client_id, "client_secret": self._secret(provider),
                "code": code, "redirect_uri": redirect_uri, "code_verifier": verifier}  # fmt: skip
        tokens = await self._json("POST", url, "exchange_failed", data=form,
                                  headers={"Accept": "application/json"})  # fmt: skip
        access = tokens.get("access_token") if isinstance(tokens, dict) else None
        if not isinstance(access, str):
            raise FederationFailed("exchange_failed", "no access_token")
        api = provider.github_api_url.rstrip("/")
        headers = {"Authorization": f"Bearer {access}", "Accept": "application/vnd.github+json"}
        user = await self._json("GET", f"{api}/user", "userinfo_failed", headers=headers)
        emails = await self._json("GET", f"{api}/user/emails", "userinfo_failed", headers=headers)
        if not isinstance(user, dict) or not isinstance(user.get("id"), int):
            raise FederationFailed("userinfo_failed", "no user id")
        entries = emails if isinstance(emails, list) else []
        verified = [e for e in entries if isinstance(e, dict) and e.get("verified") is True
                    and isinstance(e.get("email"), str)]  # fmt: skip
        verified.sort(key=lambda e: e.get("primary") is not True)
        email = verified[0]["email"] if verified else None
        name = user.get("name") or user.get("login")
        return _identity(provider.issuer, str(user["id"]), email, email is not None, name)


def _secure_url(value: Any) -> bool:
    """An ``https://`` URL with a host, or ``http://`` on a loopback host: the issuer's rule
    (``docs/reference/federation.md``), for the endpoints that carry the client secret, the code,
    the access token and the keys (RFC 9700 §2.6: no clear-text channel)."""
    if not isinstance(value, str):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return (parts.scheme == "https" and bool(parts.hostname)) or loopback_http(value)


def _time(value: Any) -> datetime | None:
    """A NumericDate claim (RFC 7519 §2) as an aware datetime, or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return datetime.fromtimestamp(value, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _identity(issuer: str, subject: str, email: Any, verified: bool, name: Any) -> UpstreamIdentity:
    """The identity, with an email only when it is a plausible string (at most 320
    characters), and ``email_verified`` only with an email."""
    mail = email if isinstance(email, str) and 3 <= len(email) <= 320 and "@" in email else None
    label = name if isinstance(name, str) and len(name) <= 256 else None
    return UpstreamIdentity(issuer, subject, mail, verified and mail is not None, label)
