"""``private_key_jwt`` client assertions (RFC 7523 §3; OpenID Connect Core 1.0 §9) checked with
PyJWT: the ``ClientAssertionVerifier`` port (docs/reference/oauth-and-oidc.md).

The keys are the client's ``jwks`` (inline) or the set served at its ``jwks_uri``: fetched with
aiohttp (``FETCH_TIMEOUT`` seconds, at most ``MAX_JWKS_BYTES``, no redirects), cached
``CACHE_TTL`` seconds per URI, fetched again at once when no cached key carries the assertion's
``kid`` (a client that rotated its keys), at most once per ``REFETCH_PAUSE`` seconds. Unless
``oauth.allow_private_jwks_uri``, the fetch goes to public addresses only
(docs/adr/0055-jwks-uri-address-rule.md, the rule of webhooks): an IP literal or ``localhost``
on a loopback, private or link-local network is refused before connecting, a name after its
resolution, in the resolver the connection uses (``adapters.http_sender.PublicOnlyResolver``);
either fails the assertion with the reason ``jwks_uri_private`` (``invalid_client``; the
address is never answered). Only
asymmetric algorithms are accepted, never ``none`` or HMAC; a key with private members is never
used. The replay of ``jti`` is the use case's (in the database).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import jwt
from aiohttp.abc import AbstractResolver
from jwt.exceptions import PyJWTError

from adapters.http_sender import PrivateTarget, PublicOnlyResolver
from application.ports import ClientAssertion, ClientAssertionVerifier
from application.shared.settings import Live, OAuthSettings
from domain.errors import InvalidClientAssertion
from domain.network import is_local_host

ASSERTION_ALGORITHMS = ("RS256", "PS256", "ES256", "EdDSA")
"""The assertion algorithms accepted, as the metadata lists them."""
FETCH_TIMEOUT = 5
"""Seconds a ``jwks_uri`` fetch may take."""
MAX_JWKS_BYTES = 65_536
"""The largest JWK Set read from a ``jwks_uri``."""
CACHE_TTL = 300
"""Seconds a fetched JWK Set is used before it is fetched again."""
REFETCH_PAUSE = 30
"""Seconds between two fetches of one URI forced by an unknown ``kid``."""
_MAX_ASSERTION = 16_384
_MAX_JTI = 256
_PRIVATE = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})
_KTY = {"RS256": "RSA", "PS256": "RSA", "ES256": "EC", "EdDSA": "OKP"}


def _refuse(reason: str) -> InvalidClientAssertion:
    return InvalidClientAssertion(reason)


class JwtClientAssertions(ClientAssertionVerifier):
    """The verifier; one per process (its cache is per ``jwks_uri`` and address rule).
    ``close()`` releases the HTTP connections. ``settings``: ``oauth`` in force, read at each
    fetch for ``allow_private_jwks_uri`` (None: never allowed); ``resolver``: the DNS resolver
    under the public-address guard (None: aiohttp's default; tests inject a fixed one);
    ``monotonic``: the cache's clock in seconds."""

    def __init__(
        self,
        settings: Live[OAuthSettings] | None = None,
        resolver: AbstractResolver | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._settings = settings
        self._resolver = resolver
        self._monotonic = monotonic
        self._sessions: dict[bool, aiohttp.ClientSession] = {}
        self._cache: dict[tuple[bool, str], tuple[float, list[dict[str, Any]]]] = {}

    @property
    def algorithms(self) -> tuple[str, ...]:
        """``ASSERTION_ALGORITHMS``."""
        return ASSERTION_ALGORITHMS

    def unverified_issuer(self, assertion: str) -> str | None:
        """See ``ClientAssertionVerifier.unverified_issuer``."""
        if len(assertion) > _MAX_ASSERTION:
            return None
        try:
            claims = jwt.decode(assertion, options={"verify_signature": False})
        except PyJWTError:
            return None
        issuer = claims.get("iss")
        return issuer if isinstance(issuer, str) else None

    async def close(self) -> None:
        """Release the HTTP connections."""
        for session in self._sessions.values():
            await session.close()
        self._sessions.clear()

    async def verify(
        self,
        assertion: str,
        client_id: str,
        jwks: str | None,
        jwks_uri: str | None,
        audiences: tuple[str, ...],
        now: datetime,
        max_lifetime: int,
    ) -> ClientAssertion:
        """See ``ClientAssertionVerifier.verify``."""
        if len(assertion) > _MAX_ASSERTION:
            raise _refuse("malformed")
        try:
            header = jwt.get_unverified_header(assertion)
        except PyJWTError:
            raise _refuse("malformed") from None
        alg = header.get("alg")
        if alg not in ASSERTION_ALGORITHMS:
            raise _refuse("alg")
        kid = header.get("kid")
        keys = await self._keys(jwks, jwks_uri, kid)
        claims = self._decode(assertion, alg, kid, keys, audiences)
        return self._checked(claims, client_id, now, max_lifetime)

    def _decode(
        self, assertion: str, alg: str, kid: Any, keys: list[dict[str, Any]],
        audiences: tuple[str, ...],
    ) -> dict[str, Any]:  # fmt: skip
        candidates = [
            k for k in keys
            if k.get("kty") == _KTY[alg] and not _PRIVATE & set(k)
            and (kid is None or k.get("kid") == kid) and k.get("alg") in (None, alg)
            and k.get("use") in (None, "sig")
        ]  # fmt: skip
        if not candidates:
            raise _refuse("keys")
        for jwk in candidates:
            try:
                key = jwt.PyJWK(jwk, algorithm=alg).key
            except PyJWTError:
                continue
            try:
                decoded: dict[str, Any] = jwt.decode(
                    assertion, key, algorithms=[alg], audience=list(audiences),
                    options={"verify_exp": False, "verify_iat": False, "verify_nbf": False,
                             "require": ["iss", "sub", "aud", "exp", "jti"]},
                )  # fmt: skip
                return decoded
            except jwt.InvalidAudienceError:
                raise _refuse("aud") from None
            except jwt.MissingRequiredClaimError as e:
                raise _refuse(e.claim) from None
            except jwt.InvalidSignatureError:
                continue
            except PyJWTError:
                raise _refuse("malformed") from None
        raise _refuse("signature")

    @staticmethod
    def _checked(
        claims: dict[str, Any], client_id: str, now: datetime, max_lifetime: int
    ) -> ClientAssertion:
        if claims.get("iss") != client_id:
            raise _refuse("iss")
        if claims.get("sub") != client_id:
            raise _refuse("sub")
        at = now.timestamp()
        exp = claims.get("exp")
        if not isinstance(exp, int) or exp <= at or exp > at + max_lifetime:
            raise _refuse("exp")
        for name in ("nbf", "iat"):
            value = claims.get(name)
            if value is not None and (not isinstance(value, int | float) or value > at + 60):
                raise _refuse(name)
        jti = claims.get("jti")
        if not isinstance(jti, str) or not 0 < len(jti) <= _MAX_JTI:
            raise _refuse("jti")
        return ClientAssertion(jti, exp)

    async def _keys(self, jwks: str | None, jwks_uri: str | None, kid: Any) -> list[dict[str, Any]]:
        if jwks is not None:
            return _key_list(json.loads(jwks))
        if jwks_uri is None:
            raise _refuse("keys")
        allow = self._settings is not None and self._settings.current.allow_private_jwks_uri
        cached = self._cache.get((allow, jwks_uri))
        age = None if cached is None else self._monotonic() - cached[0]
        unknown_kid = (
            cached is not None and kid is not None and all(k.get("kid") != kid for k in cached[1])
        )
        if (
            cached is not None
            and age is not None
            and (age < CACHE_TTL and not (unknown_kid and age >= REFETCH_PAUSE))
        ):
            return cached[1]
        keys = await self._fetch(jwks_uri, allow)
        self._cache[(allow, jwks_uri)] = (self._monotonic(), keys)
        return keys

    def _http(self, allow_private: bool) -> aiohttp.ClientSession:
        """The session of one address rule, made on first use in the running loop: with
        ``allow_private`` the resolver as given, else under ``PublicOnlyResolver``."""
        session = self._sessions.get(allow_private)
        if session is None or session.closed:
            resolver: Any = self._resolver
            if not allow_private:
                resolver = PublicOnlyResolver(self._resolver)
            connector = aiohttp.TCPConnector(resolver=resolver)
            timeout = aiohttp.ClientTimeout(total=FETCH_TIMEOUT)
            session = aiohttp.ClientSession(timeout=timeout, connector=connector)
            self._sessions[allow_private] = session
        return session

    async def _fetch(self, uri: str, allow_private: bool) -> list[dict[str, Any]]:
        try:
            host = urlsplit(uri).hostname or ""
        except ValueError:
            raise _refuse("keys") from None
        if not allow_private and is_local_host(host):
            raise _refuse("jwks_uri_private")
        try:
            async with self._http(allow_private).get(uri, allow_redirects=False) as response:
                body = await response.content.read(MAX_JWKS_BYTES + 1)
                if response.status != 200 or len(body) > MAX_JWKS_BYTES:
                    raise _refuse("keys")
                return _key_list(json.loads(body))
        except aiohttp.ClientConnectorError as exc:
            if isinstance(exc.os_error, PrivateTarget):
                raise _refuse("jwks_uri_private") from None
            raise _refuse("keys") from None
        except (aiohttp.ClientError, TimeoutError, OSError, ValueError, UnicodeDecodeError):
            raise _refuse("keys") from None


def _key_list(document: Any) -> list[dict[str, Any]]:
    keys = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(keys, list):
        raise _refuse("keys")
    return [k for k in keys if isinstance(k, dict)]
