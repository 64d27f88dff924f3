"""JWT access tokens signed with RS256 or ML-DSA-65/87: the ``Signer`` port over PyJWT.

Standards: JWT (RFC 7519), JWS compact serialization (RFC 7515), RS256 (RFC 7518 section 3.3),
ML-DSA in JOSE (RFC 9964, ``adapters.crypto.mldsa``), JWK (RFC 7517), JWK thumbprints as ``kid``
(RFC 7638, ``adapters.crypto.jwk``), and the JWT best current practices (RFC 8725: the
algorithm is chosen by the key, never by the token).

One private ``jwt.PyJWS`` registry knows exactly three algorithms (``RS256`` plus the two
ML-DSA classes, ``adapters.crypto.jws``); the process-wide PyJWT registry is left alone.
``none`` and the HMAC algorithms are not even registered, and each verification allows only
the algorithm of the key its ``kid`` names.

Which key signs and which keys still verify is the business of the ``KeyRing``
(``adapters.crypto.key_ring``; see ``docs/adr/0005-signing-keys-and-algorithm-switching.md``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from jwt.exceptions import PyJWTError

from adapters.crypto.jws import RegistryJWT, VerifyCheck, check_claims, new_jws
from adapters.crypto.key_records import KeyRecord
from adapters.crypto.key_ring import KeyRing, StoreFor, TokenTtl
from adapters.crypto.mldsa import MLDSA_ALGORITHMS, SignerUnavailable
from adapters.crypto.signing_keys import SigningKey
from application.ports import Clock, Signer
from application.shared.settings import AuthSettings
from domain.errors import InvalidToken

REQUIRED_CLAIMS = ("exp", "iat", "iss", "aud", "sub", "jti")
"""The claims every access token must carry (RFC 7519 section 4.1)."""

_CHECKED_HEADERS_MAX = 64
"""How many checked header segments a signer remembers (one per key and header form)."""


class _UnknownKid(InvalidToken):
    """No verification key has the token's ``kid`` (yet): the key store may know it."""


class JwtSigner(Signer):
    """The ``Signer`` port: signs access tokens (JWT, RFC 7519, as compact JWS, RFC 7515) with
    the key of ``auth.algorithm`` and verifies tokens signed by any key still in the
    verification set (``KeyRing``).

    Build it with ``JwtSigner.from_settings(settings, clock)`` (sync; creates missing keys, so
    from async code prefer ``await JwtSigner.from_settings_async(...)``). On a configuration
    change call ``apply(settings)`` / ``await apply_async(settings)``. ``health()`` backs the
    signing-key health indicator.

    ``sign``/``verify`` are coroutines. Tokens: header ``{"alg", "kid", "typ": "JWT"}``; claims
    as given (the caller supplies ``iat``/``exp`` as Unix seconds). Verification errors of any
    kind raise ``domain.errors.InvalidToken``.
    """

    def __init__(
        self,
        settings: AuthSettings,
        clock: Clock,
        stores: StoreFor | None = None,
        other_ttl: TokenTtl | None = None,
        on_verified: Callable[[str], None] | None = None,
    ) -> None:
        """Same as ``from_settings(settings, clock, stores, other_ttl, on_verified)``."""
        self._clock = clock
        self._jws = new_jws()
        self._jwt = RegistryJWT(self._jws)
        self._ring = KeyRing(settings, clock, stores, other_ttl)
        self._checked_headers: dict[str, tuple[str, str]] = {}
        self._on_verified = on_verified

    # -- construction ------------------------------------------------------------------------

    @classmethod
    def from_settings(
        cls,
        settings: AuthSettings,
        clock: Clock,
        stores: StoreFor | None = None,
        other_ttl: TokenTtl | None = None,
        on_verified: Callable[[str], None] | None = None,
    ) -> JwtSigner:
        """A signer for ``settings`` (``algorithm``, ``algorithms``, ``mldsa_backend``,
        ``key_dir``, lifetimes, ``key_publish_ahead``) over the key store ``stores(settings)``
        (default: key files in ``settings.key_dir``; the container passes the database store for
        ``auth.key_store = "database"``). ``other_ttl()``: the longest lifetime (s) of the other
        tokens it signs (client tokens), so retired keys verify long enough. ``on_verified(alg)``
        is called after each successful verification (the metrics).

        Makes each of ``algorithms`` a signing algorithm in the store (its key created if
        missing, keys of an algorithm not listed verifying until their tokens expired) and loads
        the keys that may still verify live tokens. Blocks (store I/O, RSA key generation
        ~0.2-1 s). Raises
        ``SignerUnavailable`` when the algorithm's backend cannot work here, ``KeyStoreError``
        on an unusable store or key.
        """
        return cls(settings, clock, stores, other_ttl, on_verified)

    @classmethod
    async def from_settings_async(
        cls,
        settings: AuthSettings,
        clock: Clock,
        stores: StoreFor | None = None,
        other_ttl: TokenTtl | None = None,
        on_verified: Callable[[str], None] | None = None,
    ) -> JwtSigner:
        """``from_settings`` in a worker thread, for async start-up code."""
        return await asyncio.to_thread(
            cls.from_settings, settings, clock, stores, other_ttl, on_verified
        )

    def apply(self, settings: AuthSettings) -> None:
        """Put ``settings`` in force (by a configuration refresh): a changed ``algorithm`` makes the
        next tokens use that algorithm's key (created if missing) while the previous key keeps
        verifying until its tokens have expired. Blocking; from async code use ``apply_async``.

        Raises ``SignerUnavailable``/``KeyStoreError`` and leaves the signer unchanged if the
        new settings cannot be served.
        """
        self._ring.apply(settings)

    async def apply_async(self, settings: AuthSettings) -> None:
        """``apply`` in a worker thread."""
        await asyncio.to_thread(self.apply, settings)

    # -- key management (ADR 0015) -----------------------------------------------------------

    async def refresh_keys(self) -> bool:
        """Re-read the key store (a peer rotated or retired a key; the periodic poll) in a
        worker thread; True if the key set changed. Raises ``KeyStoreError``."""
        return await asyncio.to_thread(self._ring.refresh)

    async def rotate_keys(
        self, *, now: bool = False, due_after: int | None = None, alg: str | None = None
    ) -> Any:
        """Add a key of ``alg`` (default ``auth.algorithm``) that signs
        ``auth.key_publish_ahead`` s from now (``now``: at once); see ``KeyRing.rotate``.
        Returns the new ``KeyRecord``, or None when ``due_after`` says the newest key is not old
        enough. Raises ``KeyOperationRefused`` (``alg`` not in ``auth.algorithms``) and
        ``KeyStoreError``."""
        return await asyncio.to_thread(
            lambda: self._ring.rotate(now=now, due_after=due_after, alg=alg)
        )

    async def retire_key(self, kid: str) -> None:
        """Withdraw key ``kid`` at once (see ``KeyRing.retire``). Raises
        ``KeyOperationRefused`` and ``KeyStoreError``."""
        await asyncio.to_thread(self._ring.retire, kid)

    async def key_records(self) -> list[KeyRecord]:
        """Every record of the key store, as stored (read afresh). Raises ``KeyStoreError``."""
        return await asyncio.to_thread(lambda: self._ring.store.records())

    @property
    def settings(self) -> AuthSettings:
        """The ``auth`` settings the key ring was built for."""
        return self._ring.current.settings

    # -- the port ----------------------------------------------------------------------------

    @property
    def algorithm(self) -> str:
        """The JWS ``alg`` of new tokens: ``RS256``, ``ML-DSA-65`` or ``ML-DSA-87``."""
        return self._ring.active.alg

    @property
    def algorithms(self) -> tuple[str, ...]:
        """Every JWS ``alg`` new tokens may be signed with (``auth.algorithms``), the default
        first."""
        return self._ring.current.settings.signing_algorithms

    @property
    def kid(self) -> str:
        """The ``kid`` of the active key of the default algorithm (RFC 7638 thumbprint)."""
        return self._ring.active.kid

    def signing_kids(self) -> dict[str, str]:
        """``{alg: kid}`` of the key signing each of ``auth.algorithms`` now, default first."""
        return {k.alg: k.kid for k in self._ring.signing_keys()}

    def verification_keys(self) -> list[SigningKey]:
        """The keys that may still verify a live token now: the active one first."""
        return self._ring.verification_keys()

    async def sign(
        self, claims: Mapping[str, Any], *, typ: str = "JWT", alg: str | None = None
    ) -> str:
        """A compact JWS (RFC 7515) over ``claims`` (JSON object; ``iat``/``exp`` in Unix s)
        with header ``{"alg", "kid", "typ"}``, signed by the active key of ``alg`` (default:
        ``auth.algorithm``; an algorithm not in ``auth.algorithms`` — removed by a refresh
        meanwhile — falls back to the default). ``typ``: ``JWT`` for user tokens, ``at+jwt``
        for client tokens (RFC 9068).

        Runs on the event loop: one signature costs ~1 ms (see ``bench/bench_signers.py``), less
        than handing it to a thread would save.
        """
        return self.sign_sync(claims, typ=typ, alg=alg)

    def sign_sync(
        self, claims: Mapping[str, Any], *, typ: str = "JWT", alg: str | None = None
    ) -> str:
        """``sign`` as a plain call (for benchmarks and callers already off the loop)."""
        key = self._signing_key(alg)
        return self._jwt.encode(
            dict(claims), key.private, algorithm=key.alg, headers={"kid": key.kid, "typ": typ}
        )

    async def verify(
        self,
        token: str,
        *,
        issuer: str,
        audience: str | None,
        leeway: int,
        typ: str = "JWT",
        verify_exp: bool = True,
    ) -> dict[str, Any]:
        """The claims of ``token`` if it is valid now (by the injected clock).

        The key is chosen by the header's ``kid`` among ``verification_keys()``; only that key's
        algorithm is accepted; the header's ``typ`` must be ``typ`` (case-insensitive; absent
        passes for ``JWT``). Requires ``exp, iat, iss, aud, sub, jti``; ``iss`` must equal
        ``issuer`` and ``aud`` hold ``audience`` (None: any audience); ``exp`` (and
        ``iat``/``nbf``) are checked with ``leeway`` seconds of skew (``exp`` not at all with
        ``verify_exp`` false). Raises ``InvalidToken`` for every failure.
        """
        check = VerifyCheck(issuer, audience, leeway, typ.lower(), verify_exp)
        try:
            return self._verify(token, check)
        except _UnknownKid:
            # A key added elsewhere (a peer's rotation, a sibling's switch): re-read the store
            # off the event loop (at most every few seconds), then try once more.
            if not self._ring.peer_check_due() or not await asyncio.to_thread(
                self._ring.adopt_peer_keys
            ):
                raise InvalidToken("unknown kid") from None
            return self._verify(token, check, adopt=False)

    def verify_sync(
        self, token: str, *, issuer: str, audience: str | None, leeway: int, typ: str = "JWT"
    ) -> dict[str, Any]:
        """``verify`` as a plain call; same checks, same errors (an unknown ``kid`` re-reads
        the key store on the calling thread)."""
        check = VerifyCheck(issuer, audience, leeway, typ.lower())
        try:
            return self._verify(token, check)
        except _UnknownKid:
            if not self._ring.adopt_peer_keys():
                raise InvalidToken("unknown kid") from None
            return self._verify(token, check, adopt=False)

    def signing_algorithm(self, alg: str | None) -> str:
        """The algorithm ``sign(..., alg=alg)`` signs with now."""
        return self._signing_key(alg).alg

    def _signing_key(self, alg: str | None) -> SigningKey:
        if alg is None:
            return self._ring.active
        try:
            return self._ring.active_for(alg)
        except KeyError:
            return self._ring.active

    def _key_for(self, token: str, typ: str) -> SigningKey:
        """The verification key named by ``token``'s header, checked against it (``kid`` known,
        ``alg`` the key's own, ``typ`` the expected one, lower-case); raises ``InvalidToken``.

        Every token of one key carries the same header segment, so a segment that passed these
        checks is remembered with its ``kid`` (a few entries): the next token's header is one
        dictionary lookup instead of a parse of the whole token. The key itself is looked up in
        the ring each time, so a retired key stops verifying at once.
        """
        segment = token.partition(".")[0]
        checked = self._checked_headers.get(segment)
        if checked is not None and checked[1] == typ:
            key = self._ring.find(checked[0])
            if key is not None:
                return key
        try:
            header = self._jws.get_unverified_header(token)
        except (PyJWTError, ValueError, TypeError) as e:
            raise InvalidToken("malformed token") from e
        kid = header.get("kid")
        if not isinstance(kid, str) or not kid:
            raise InvalidToken("token has no kid")
        key = self._ring.find(kid)
        if key is None:
            raise _UnknownKid("unknown kid")
        if header.get("alg") != key.alg:
            raise InvalidToken("token alg does not match its key")
        found = header.get("typ", "jwt" if typ == "jwt" else None)
        if not isinstance(found, str) or found.lower() != typ:
            raise InvalidToken(f"token typ is not {typ}")
        if len(self._checked_headers) >= _CHECKED_HEADERS_MAX:
            self._checked_headers.clear()
        self._checked_headers[segment] = (kid, typ)
        return key

    def _verify(self, token: str, check: VerifyCheck, *, adopt: bool = True) -> dict[str, Any]:
        """Raises ``_UnknownKid`` (an ``InvalidToken``) for an unknown kid when ``adopt``."""
        try:
            key = self._key_for(token, check.typ)
        except _UnknownKid:
            if adopt:
                raise
            raise InvalidToken("unknown kid") from None
        try:
            claims: dict[str, Any] = self._jwt.decode(
                token,
                key.public,
                algorithms=[key.alg],
                issuer=check.issuer,
                audience=check.audience,
                options={
                    "require": list(REQUIRED_CLAIMS),
                    "verify_exp": False,  # checked below against the injected clock
                    "verify_iat": False,
                    "verify_nbf": False,
                    "verify_aud": check.audience is not None,
                    "strict_aud": True,
                },
            )
        except (PyJWTError, ValueError, TypeError) as e:
            raise InvalidToken(f"invalid token: {type(e).__name__}") from e
        check_claims(claims, check, self._clock.now().timestamp())
        if self._on_verified is not None:
            self._on_verified(key.alg)
        return claims

    def jwks(self) -> dict[str, Any]:
        """``{"keys": [JWK, ...]}`` (RFC 7517): every public key that may still verify a live
        token, the active key first. RSA keys as ``{"kty": "RSA", "n", "e", "kid", "alg":
        "RS256", "use": "sig"}``; ML-DSA keys as ``{"kty": "AKP", "alg", "pub", "kid", "use":
        "sig"}`` (RFC 7517 §4.2)."""
        return {"keys": [dict(k.jwk) for k in self.verification_keys()]}

    def health(self) -> dict[str, Any]:
        """Details for the signing-key health indicator: ``{"alg", "kid", "backend",
        "verification_kids"}`` (the default algorithm's key), plus ``"signing_kids"`` (``{alg:
        kid}``) when ``auth.algorithms`` lists several. Signs and verifies a probe with each
        active key first; raises (``SignerUnavailable``) if a private key is unusable."""
        keys = self._ring.current
        active = self._ring.active
        probe = b"authsvc health probe"
        signing = self._ring.signing_keys()
        for key in signing:
            try:
                alg_obj = self._jws.get_algorithm_by_name(key.alg)
                ok = alg_obj.verify(probe, key.public, alg_obj.sign(probe, key.private))
            except Exception as e:
                raise SignerUnavailable(f"the active {key.alg} key cannot sign: {e}") from e
            if not ok:
                raise SignerUnavailable(f"the active {key.alg} key produced an invalid signature")
        mldsa = any(k.alg in MLDSA_ALGORITHMS for k in signing)
        details: dict[str, Any] = {
            "alg": active.alg,
            "kid": active.kid,
            "backend": keys.backend_name if active.alg in MLDSA_ALGORITHMS else "cryptography",
            "verification_kids": [k.kid for k in self.verification_keys()],
        }
        if len(signing) > 1:
            details["signing_kids"] = {k.alg: k.kid for k in signing}
            if mldsa:
                details["mldsa_backend"] = keys.backend_name
        return details


__all__ = ["REQUIRED_CLAIMS", "JwtSigner"]
