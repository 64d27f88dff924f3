"""JWT access tokens signed with RS256 or ML-DSA-65/87: the ``Signer`` port over PyJWT.

Standards: JWT (RFC 7519), JWS compact serialization (RFC 7515), RS256 (RFC 7518 section 3.3),
ML-DSA in JOSE (RFC 9964: ``alg`` ``ML-DSA-65``/``ML-DSA-87``, signature = FIPS 204 pure
ML-DSA with an empty context over the JWS signing input, public keys as ``AKP`` JWKs), JWK
(RFC 7517), JWK thumbprints as ``kid`` (RFC 7638), and the JWT best current practices
(RFC 8725: the algorithm is chosen by the key, never by the token).

One private ``jwt.PyJWS`` registry knows exactly three algorithms (``RS256`` plus the two
ML-DSA classes registered here); the process-wide PyJWT registry is left alone. ``none`` and
the HMAC algorithms are not even registered, and each verification allows only the algorithm
of the key its ``kid`` names.

ML-DSA arithmetic comes from a backend: ``cryptography`` (OpenSSL >= 3.5, the default) or
``liboqs`` (``adapters.crypto.oqs``); both load keys from the same 32-byte seed files and
produce interchangeable signatures.

Key switching (``docs/adr/0005-signing-keys-and-algorithm-switching.md``): the key of the
configured algorithm signs; keys that were active earlier keep verifying, and stay in the JWKS,
until every token they may have signed has expired (retirement time + access-token lifetime +
leeway, by the injected ``Clock``).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any, Literal, TypeVar, overload

import attrs
import jwt
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import Algorithm, RSAAlgorithm
from jwt.exceptions import InvalidKeyError, PyJWTError

from adapters.crypto.keystore import KeyStore, KeyStoreError, isoformat, parse_time
from application.ports import Clock
from application.settings import ALGORITHMS, AuthSettings
from domain.errors import InvalidToken

log = logging.getLogger(__name__)

MLDSA_ALGORITHMS = ("ML-DSA-65", "ML-DSA-87")
REQUIRED_CLAIMS = ("exp", "iat", "iss", "aud", "sub", "jti")
PEER_CHECK_INTERVAL = 5
"""Seconds between re-reads of ``keys.json`` prompted by tokens with an unknown ``kid``."""

T = TypeVar("T")


class SignerUnavailable(RuntimeError):
    """The configured algorithm cannot be used here (e.g. OpenSSL lacks ML-DSA, liboqs absent).

    Raised at start (``JwtSigner.from_settings``) or on ``apply``; the message says how to fix it.
    """


# --------------------------------------------------------------------------------------------
# ML-DSA key objects and backends


class MLDSAPublicKey(ABC):
    """An ML-DSA public key of one backend; ``alg`` is ``ML-DSA-65`` or ``ML-DSA-87``."""

    alg: str

    @abstractmethod
    def public_bytes(self) -> bytes:
        """The raw FIPS 204 encoded public key (1952 bytes for -65, 2592 for -87)."""

    @abstractmethod
    def verify(self, signature: bytes, data: bytes) -> bool:
        """True iff ``signature`` is a pure ML-DSA signature (empty context) of ``data``."""


class MLDSAPrivateKey(ABC):
    """An ML-DSA private key of one backend, loaded from its 32-byte seed."""

    alg: str

    @abstractmethod
    def sign(self, data: bytes) -> bytes:
        """A pure ML-DSA signature (FIPS 204 Algorithm 2, empty context) of ``data``.

        3309 bytes for ML-DSA-65, 4627 for ML-DSA-87.
        """

    @abstractmethod
    def public_key(self) -> MLDSAPublicKey:
        """The matching public key."""


class MLDSABackend(ABC):
    """Where ML-DSA arithmetic comes from. ``name`` is the ``auth.mldsa_backend`` value."""

    name: str

    @abstractmethod
    def private_key_from_seed(self, alg: str, seed: bytes) -> MLDSAPrivateKey:
        """The key pair FIPS 204 ``ML-DSA.KeyGen_internal(seed)`` derives (seed: 32 bytes)."""

    @abstractmethod
    def public_key_from_bytes(self, alg: str, data: bytes) -> MLDSAPublicKey:
        """A public key from its raw encoding. Raises ``ValueError`` on a malformed key."""


class _CryptoPublic(MLDSAPublicKey):
    def __init__(self, alg: str, key: Any) -> None:
        self.alg = alg
        self._key = key

    def public_bytes(self) -> bytes:
        return bytes(self._key.public_bytes_raw())

    def verify(self, signature: bytes, data: bytes) -> bool:
        try:
            self._key.verify(signature, data)
        except InvalidSignature:
            return False
        return True


class _CryptoPrivate(MLDSAPrivateKey):
    def __init__(self, alg: str, key: Any) -> None:
        self.alg = alg
        self._key = key

    def sign(self, data: bytes) -> bytes:
        return bytes(self._key.sign(data))

    def public_key(self) -> MLDSAPublicKey:
        return _CryptoPublic(self.alg, self._key.public_key())


class CryptographyMLDSA(MLDSABackend):
    """ML-DSA from ``cryptography`` (needs its OpenSSL build to provide ML-DSA, OpenSSL >= 3.5).

    Raises ``SignerUnavailable`` at construction when the build lacks ML-DSA.
    """

    name = "cryptography"

    def __init__(self) -> None:
        try:
            from cryptography.hazmat.backends.openssl.backend import backend
            from cryptography.hazmat.primitives.asymmetric import mldsa
        except ImportError as e:  # pragma: no cover - cryptography < 47
            raise SignerUnavailable(
                "auth.algorithm ML-DSA needs cryptography >= 47 with ML-DSA support "
                "(or auth.mldsa_backend = 'liboqs')"
            ) from e
        if not backend.mldsa_supported():
            raise SignerUnavailable(
                f"the OpenSSL build used by cryptography ({backend.openssl_version_text()}) "
                "lacks ML-DSA; install a cryptography wheel built with OpenSSL >= 3.5, or set "
                "auth.mldsa_backend = 'liboqs' (extra 'oqs'), or auth.algorithm = 'RS256'"
            )
        self._private: dict[str, Any] = {
            "ML-DSA-65": mldsa.MLDSA65PrivateKey,
            "ML-DSA-87": mldsa.MLDSA87PrivateKey,
        }
        self._public: dict[str, Any] = {
            "ML-DSA-65": mldsa.MLDSA65PublicKey,
            "ML-DSA-87": mldsa.MLDSA87PublicKey,
        }

    def private_key_from_seed(self, alg: str, seed: bytes) -> MLDSAPrivateKey:
        try:
            return _CryptoPrivate(alg, self._private[alg].from_seed_bytes(seed))
        except UnsupportedAlgorithm as e:  # pragma: no cover - checked in __init__
            raise SignerUnavailable(str(e)) from e

    def public_key_from_bytes(self, alg: str, data: bytes) -> MLDSAPublicKey:
        return _CryptoPublic(alg, self._public[alg].from_public_bytes(data))


def mldsa_backend(name: str) -> MLDSABackend:
    """The ML-DSA backend called ``name`` (``cryptography`` or ``liboqs``).

    Raises ``SignerUnavailable`` with installation advice when it cannot work here.
    """
    if name == "cryptography":
        return CryptographyMLDSA()
    if name == "liboqs":
        from adapters.crypto.oqs import LiboqsMLDSA  # optional extra: imported on demand

        return LiboqsMLDSA()
    raise SignerUnavailable(f"unknown auth.mldsa_backend {name!r}")


# --------------------------------------------------------------------------------------------
# PyJWT algorithm for ML-DSA (RFC 9964)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64url_decode(data: str) -> bytes:
    return base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))


class MLDSAAlgorithm(Algorithm):
    """PyJWT ``Algorithm`` for ``ML-DSA-65``/``ML-DSA-87`` (RFC 9964 section 3).

    Signs and verifies the JWS signing input with pure ML-DSA (empty context). Keys are
    ``MLDSAPrivateKey``/``MLDSAPublicKey`` of the same parameter set; anything else (strings,
    bytes, RSA keys, the other parameter set) raises ``jwt.InvalidKeyError``.
    """

    def __init__(self, alg: str) -> None:
        if alg not in MLDSA_ALGORITHMS:
            raise ValueError(f"not an ML-DSA algorithm: {alg}")
        self.alg = alg

    def prepare_key(self, key: Any) -> MLDSAPrivateKey | MLDSAPublicKey:
        if isinstance(key, MLDSAPrivateKey | MLDSAPublicKey) and key.alg == self.alg:
            return key
        raise InvalidKeyError(f"expected an {self.alg} key object")

    def sign(self, msg: bytes, key: MLDSAPrivateKey | MLDSAPublicKey) -> bytes:
        if not isinstance(key, MLDSAPrivateKey):
            raise InvalidKeyError("signing needs a private key")
        return key.sign(msg)

    def verify(self, msg: bytes, key: MLDSAPrivateKey | MLDSAPublicKey, sig: bytes) -> bool:
        public = key.public_key() if isinstance(key, MLDSAPrivateKey) else key
        try:
            return public.verify(sig, msg)
        except ValueError:
            return False

    @overload
    @staticmethod
    def to_jwk(key_obj: Any, as_dict: Literal[True]) -> dict[str, Any]: ...

    @overload
    @staticmethod
    def to_jwk(key_obj: Any, as_dict: Literal[False] = False) -> str: ...

    @staticmethod
    def to_jwk(key_obj: Any, as_dict: bool = False) -> dict[str, Any] | str:
        """The public ``AKP`` JWK ``{"kty": "AKP", "alg", "pub"}`` (never the private seed)."""
        public = key_obj.public_key() if isinstance(key_obj, MLDSAPrivateKey) else key_obj
        if not isinstance(public, MLDSAPublicKey):
            raise InvalidKeyError("not an ML-DSA key")
        jwk = {"kty": "AKP", "alg": public.alg, "pub": _b64url(public.public_bytes())}
        return jwk if as_dict else json.dumps(jwk)

    @staticmethod
    def from_jwk(jwk: str | Mapping[str, Any]) -> MLDSAPublicKey:
        """A public key (``cryptography`` backend) from an AKP JWK. Raises ``InvalidKeyError``."""
        obj = json.loads(jwk) if isinstance(jwk, str) else dict(jwk)
        if obj.get("kty") != "AKP" or obj.get("alg") not in MLDSA_ALGORITHMS:
            raise InvalidKeyError("not an ML-DSA AKP JWK")
        try:
            return CryptographyMLDSA().public_key_from_bytes(obj["alg"], _b64url_decode(obj["pub"]))
        except (KeyError, ValueError, TypeError) as e:
            raise InvalidKeyError(f"malformed AKP JWK: {e}") from e


# --------------------------------------------------------------------------------------------
# JWKs and thumbprints


def jwk_thumbprint(jwk: Mapping[str, Any]) -> str:
    """RFC 7638 SHA-256 thumbprint (base64url) over the required members of ``jwk``.

    RSA: ``e, kty, n``; AKP (RFC 9964 section 6): ``alg, kty, pub``.
    """
    members = {"RSA": ("e", "kty", "n"), "AKP": ("alg", "kty", "pub")}[jwk["kty"]]
    canonical = json.dumps({m: jwk[m] for m in members}, separators=(",", ":"), sort_keys=True)
    return _b64url(hashlib.sha256(canonical.encode("utf-8")).digest())


@attrs.frozen
class SigningKey:
    """One key of the signer: ``alg``, ``kid`` (RFC 7638 thumbprint), the private and public
    key objects, its public ``jwk``, and ``verify_until``: None while it is the active key,
    otherwise the time after which no token it signed can still be live."""

    alg: str
    kid: str
    private: Any = attrs.field(repr=False)
    public: Any = attrs.field(repr=False)
    jwk: dict[str, Any]
    verify_until: datetime | None = None


def load_signing_key(alg: str, material: bytes, backend: Callable[[], MLDSABackend]) -> SigningKey:
    """Build a ``SigningKey`` from key-file ``material`` (PKCS#8 PEM or 32-byte seed).

    Raises ``KeyStoreError`` if the material does not hold a usable key of ``alg``, and
    ``SignerUnavailable`` if the ML-DSA backend cannot be used.
    """
    if alg == "RS256":
        try:
            private = serialization.load_pem_private_key(material, password=None)
        except (ValueError, TypeError, UnsupportedAlgorithm) as e:
            raise KeyStoreError(f"the RS256 key file does not hold a private key: {e}") from e
        if not isinstance(private, rsa.RSAPrivateKey) or private.key_size < 2048:
            raise KeyStoreError("the RS256 key file must hold an RSA key of >= 2048 bits")
        public: Any = private.public_key()
        base = RSAAlgorithm.to_jwk(public, as_dict=True)
        jwk = {"kty": "RSA", "n": base["n"], "e": base["e"]}
        kid = jwk_thumbprint(jwk)
        jwk.update({"kid": kid, "alg": "RS256", "use": "sig"})
        return SigningKey(alg, kid, private, public, jwk)
    if alg in MLDSA_ALGORITHMS:
        mprivate = backend().private_key_from_seed(alg, material)
        mpublic = mprivate.public_key()
        jwk = MLDSAAlgorithm.to_jwk(mpublic, as_dict=True)
        kid = jwk_thumbprint(jwk)
        jwk["kid"] = kid
        return SigningKey(alg, kid, mprivate, mpublic, jwk)
    raise KeyStoreError(f"unknown algorithm {alg!r}")


# --------------------------------------------------------------------------------------------
# The signer


@attrs.frozen
class _KeySet:
    settings: AuthSettings
    active: SigningKey
    retired: tuple[SigningKey, ...]
    backend_name: str


class _JWT(jwt.PyJWT):
    """A PyJWT whose JWS layer is the signer's own algorithm registry."""

    def __init__(self, jws: jwt.PyJWS) -> None:
        super().__init__(options={"verify_signature": True})
        self._jws = jws


def _new_jws() -> jwt.PyJWS:
    jws = jwt.PyJWS(algorithms=["RS256"], options={"enforce_minimum_key_length": True})
    for alg in MLDSA_ALGORITHMS:
        jws.register_algorithm(alg, MLDSAAlgorithm(alg))
    return jws


def _int_claim(claims: Mapping[str, Any], name: str) -> int:
    value = claims.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidToken(f"claim {name!r} must be an integer")
    return value


class JwtSigner:
    """The ``Signer`` port: signs access tokens with the key of ``auth.algorithm`` and verifies
    tokens signed by any key still in the verification set.

    Build it with ``JwtSigner.from_settings(settings, clock)`` (sync; creates missing keys, so
    from async code prefer ``await JwtSigner.from_settings_async(...)``). On a configuration
    change call ``apply(settings)`` / ``await apply_async(settings)``. ``health()`` backs the
    signing-key health indicator.

    ``sign``/``verify`` are coroutines. Tokens: header ``{"alg", "kid", "typ": "JWT"}``; claims
    as given (the caller supplies ``iat``/``exp`` as Unix seconds). Verification errors of any
    kind raise ``domain.errors.InvalidToken``.
    """

    def __init__(self, settings: AuthSettings, clock: Clock) -> None:
        """Same as ``from_settings(settings, clock)``."""
        self._keystore = KeyStore(settings.key_dir)
        self._clock = clock
        self._jws = _new_jws()
        self._jwt = _JWT(self._jws)
        self._lock = threading.Lock()
        self._backends: dict[str, MLDSABackend] = {}
        self._keys = self._build(settings, previous=None)
        self._next_peer_check = clock.now()

    # -- construction ------------------------------------------------------------------------

    @classmethod
    def from_settings(cls, settings: AuthSettings, clock: Clock) -> JwtSigner:
        """A signer for ``settings`` (``algorithm``, ``mldsa_backend``, ``key_dir``, lifetimes).

        Creates the key directory and the active key if missing, records the key as active in
        ``keys.json`` (retiring any other active key) and loads the keys that may still verify
        live tokens. Blocks (RSA key generation ~0.2-1 s). Raises ``SignerUnavailable`` when the
        algorithm's backend cannot work here, ``KeyStoreError`` on unusable key files.
        """
        return cls(settings, clock)

    @classmethod
    async def from_settings_async(cls, settings: AuthSettings, clock: Clock) -> JwtSigner:
        """``from_settings`` in a worker thread, for async start-up code."""
        return await asyncio.to_thread(cls.from_settings, settings, clock)

    def apply(self, settings: AuthSettings) -> None:
        """Put ``settings`` in force (on ``ConfigChanged``): a changed ``algorithm`` makes the
        next tokens use that algorithm's key (created if missing) while the previous key keeps
        verifying until its tokens have expired. Blocking; from async code use ``apply_async``.

        Raises ``SignerUnavailable``/``KeyStoreError`` and leaves the signer unchanged if the
        new settings cannot be served.
        """
        with self._lock:
            self._keys = self._build(settings, previous=self._keys)

    async def apply_async(self, settings: AuthSettings) -> None:
        """``apply`` in a worker thread."""
        await asyncio.to_thread(self.apply, settings)

    def _backend(self, name: str) -> MLDSABackend:
        if name not in self._backends:
            self._backends[name] = mldsa_backend(name)
        return self._backends[name]

    def _build(self, settings: AuthSettings, previous: _KeySet | None) -> _KeySet:
        if settings.algorithm not in ALGORITHMS:
            raise SignerUnavailable(f"unknown auth.algorithm {settings.algorithm!r}")
        if previous is not None and settings.key_dir != previous.settings.key_dir:
            self._keystore = KeyStore(settings.key_dir)
        store = self._keystore
        backend_name = settings.mldsa_backend

        def backend() -> MLDSABackend:
            return self._backend(backend_name)

        alg = settings.algorithm
        active = load_signing_key(alg, store.load_or_create(alg), backend)
        now = self._clock.now()
        lifetime = settings.access_token_ttl + settings.leeway
        if previous is not None:
            lifetime = max(lifetime, previous.settings.access_token_ttl + previous.settings.leeway)

        def activate(state: dict[str, Any]) -> None:
            records: dict[str, Any] = state.setdefault("keys", {})
            for other, rec in records.items():
                if other == alg or not isinstance(rec, dict) or not rec.get("active"):
                    continue
                recorded = rec.get("lifetime")
                span = max(lifetime, recorded if isinstance(recorded, int) else 0)
                until = now + timedelta(seconds=span)
                earlier = parse_time(rec.get("verify_until"))
                if earlier is not None and earlier > until:
                    until = earlier
                rec.update(active=False, retired_at=isoformat(now), verify_until=isoformat(until))
                log.info("%s key %s retired; verifies until %s", other, rec.get("kid"), until)
            records[alg] = {
                "kid": active.kid,
                "active": True,
                "activated_at": isoformat(now),
                "lifetime": lifetime,
                "verify_until": None,
            }

        state = store.update_state(activate)
        retired: list[SigningKey] = []
        for other, rec in state.get("keys", {}).items():
            if other == alg or other not in ALGORITHMS or not isinstance(rec, dict):
                continue
            until = parse_time(rec.get("verify_until"))
            if until is None or until <= now:
                continue
            try:
                material = store.load(other)
                if material is None:
                    continue
                key = load_signing_key(other, material, backend)
            except (KeyStoreError, SignerUnavailable) as e:
                log.warning("retired %s key cannot be loaded, its tokens will fail: %s", other, e)
                continue
            if key.kid != rec.get("kid"):
                continue  # the file was replaced: the recorded key is gone
            retired.append(attrs.evolve(key, verify_until=until))
        log.info("signing with %s key %s", alg, active.kid)
        return _KeySet(settings, active, tuple(retired), backend_name)

    # -- the port ----------------------------------------------------------------------------

    @property
    def algorithm(self) -> str:
        """The JWS ``alg`` of new tokens: ``RS256``, ``ML-DSA-65`` or ``ML-DSA-87``."""
        return self._keys.active.alg

    @property
    def kid(self) -> str:
        """The ``kid`` of the active key (RFC 7638 thumbprint)."""
        return self._keys.active.kid

    def verification_keys(self) -> list[SigningKey]:
        """The keys that may still verify a live token now: the active one first."""
        keys = self._keys
        now = self._clock.now()
        live = [k for k in keys.retired if k.verify_until is not None and k.verify_until > now]
        return [keys.active, *live]

    def _find(self, kid: str) -> SigningKey | None:
        return next((k for k in self.verification_keys() if k.kid == kid), None)

    def _adopt_peer_keys(self) -> bool:
        """Pick up keys another process sharing the key directory activated (e.g. a worker
        that applied a new ``auth.algorithm`` first). Reads ``keys.json`` at most once per
        ``PEER_CHECK_INTERVAL`` seconds (by the injected clock); True if a key was added."""
        now = self._clock.now()
        if now < self._next_peer_check:
            return False
        self._next_peer_check = now + timedelta(seconds=PEER_CHECK_INTERVAL)
        with self._lock:
            keys = self._keys
            known = {k.kid for k in self.verification_keys()}
            default_span = keys.settings.access_token_ttl + keys.settings.leeway
            added: list[SigningKey] = []
            for alg, rec in self._keystore.read_state().get("keys", {}).items():
                if alg not in ALGORITHMS or not isinstance(rec, dict) or rec.get("kid") in known:
                    continue
                until: datetime | None
                if rec.get("active"):
                    span = rec.get("lifetime")
                    until = now + timedelta(seconds=span if isinstance(span, int) else default_span)
                else:
                    until = parse_time(rec.get("verify_until"))
                if until is None or until <= now:
                    continue
                try:
                    material = self._keystore.load(alg)
                    if material is None:
                        continue
                    key = load_signing_key(alg, material, lambda: self._backend(keys.backend_name))
                except (KeyStoreError, SignerUnavailable, ValueError) as e:
                    log.warning("cannot load the %s key another process activated: %s", alg, e)
                    continue
                if key.kid == rec.get("kid"):
                    log.info("adopted %s key %s activated by another process", alg, key.kid)
                    added.append(attrs.evolve(key, verify_until=until))
            if added:
                renewed = {k.kid for k in added}
                kept = tuple(k for k in keys.retired if k.kid not in renewed)
                self._keys = attrs.evolve(keys, retired=(*kept, *added))
            return bool(added)

    async def sign(self, claims: Mapping[str, Any]) -> str:
        """A compact JWS (RFC 7515) over ``claims`` (JSON object; ``iat``/``exp`` in Unix s)
        with header ``{"alg", "kid", "typ": "JWT"}``, signed by the active key.

        Runs on the event loop: one signature costs ~1 ms (see ``bench/bench_signers.py``), less
        than handing it to a thread would save.
        """
        return self.sign_sync(claims)

    def sign_sync(self, claims: Mapping[str, Any]) -> str:
        """``sign`` as a plain call (for benchmarks and callers already off the loop)."""
        key = self._keys.active
        return self._jwt.encode(
            dict(claims), key.private, algorithm=key.alg, headers={"kid": key.kid, "typ": "JWT"}
        )

    async def verify(
        self, token: str, *, issuer: str, audience: str, leeway: int
    ) -> dict[str, Any]:
        """The claims of ``token`` if it is valid now (by the injected clock).

        The key is chosen by the header's ``kid`` among ``verification_keys()``; only that key's
        algorithm is accepted. Requires ``exp, iat, iss, aud, sub, jti``; ``iss``/``aud`` must
        equal ``issuer``/``audience``; ``exp`` (and ``iat``/``nbf``) are checked with ``leeway``
        seconds of skew. Raises ``InvalidToken`` for every failure.
        """
        return self.verify_sync(token, issuer=issuer, audience=audience, leeway=leeway)

    def verify_sync(self, token: str, *, issuer: str, audience: str, leeway: int) -> dict[str, Any]:
        """``verify`` as a plain call; same checks, same errors."""
        return self._verify(token, issuer=issuer, audience=audience, leeway=leeway)

    def _verify(self, token: str, *, issuer: str, audience: str, leeway: int) -> dict[str, Any]:
        try:
            header = self._jws.get_unverified_header(token)
        except (PyJWTError, ValueError, TypeError) as e:
            raise InvalidToken("malformed token") from e
        kid = header.get("kid")
        if not isinstance(kid, str) or not kid:
            raise InvalidToken("token has no kid")
        key = self._find(kid)
        if key is None and self._adopt_peer_keys():
            key = self._find(kid)
        if key is None:
            raise InvalidToken("unknown kid")
        if header.get("alg") != key.alg:
            raise InvalidToken("token alg does not match its key")
        typ = header.get("typ")
        if typ is not None and (not isinstance(typ, str) or typ.upper() != "JWT"):
            raise InvalidToken("token typ is not JWT")
        try:
            claims: dict[str, Any] = self._jwt.decode(
                token,
                key.public,
                algorithms=[key.alg],
                issuer=issuer,
                audience=audience,
                options={
                    "require": list(REQUIRED_CLAIMS),
                    "verify_exp": False,  # checked below against the injected clock
                    "verify_iat": False,
                    "verify_nbf": False,
                    "strict_aud": True,
                },
            )
        except (PyJWTError, ValueError, TypeError) as e:
            raise InvalidToken(f"invalid token: {type(e).__name__}") from e
        now = self._clock.now().timestamp()
        if _int_claim(claims, "exp") <= now - leeway:
            raise InvalidToken("token expired")
        if _int_claim(claims, "iat") > now + leeway:
            raise InvalidToken("token issued in the future")
        if "nbf" in claims and _int_claim(claims, "nbf") > now + leeway:
            raise InvalidToken("token not yet valid")
        if not isinstance(claims.get("sub"), str) or not isinstance(claims.get("jti"), str):
            raise InvalidToken("sub and jti must be strings")
        return claims

    def jwks(self) -> dict[str, Any]:
        """``{"keys": [JWK, ...]}`` (RFC 7517): every public key that may still verify a live
        token, the active key first. RSA keys as ``{"kty": "RSA", "n", "e", "kid", "alg":
        "RS256", "use": "sig"}``; ML-DSA keys as ``{"kty": "AKP", "alg", "pub", "kid"}``."""
        return {"keys": [dict(k.jwk) for k in self.verification_keys()]}

    def health(self) -> dict[str, Any]:
        """Details for the signing-key health indicator: ``{"alg", "kid", "backend",
        "verification_kids"}``. Signs and verifies a probe with the active key first; raises
        (``SignerUnavailable``) if the private key is unusable."""
        keys = self._keys
        active = keys.active
        probe = b"authsvc health probe"
        try:
            alg_obj = self._jws.get_algorithm_by_name(active.alg)
            ok = alg_obj.verify(probe, active.public, alg_obj.sign(probe, active.private))
        except Exception as e:
            raise SignerUnavailable(f"the active {active.alg} key cannot sign: {e}") from e
        if not ok:
            raise SignerUnavailable(f"the active {active.alg} key produced an invalid signature")
        return {
            "alg": active.alg,
            "kid": active.kid,
            "backend": keys.backend_name if active.alg in MLDSA_ALGORITHMS else "cryptography",
            "verification_kids": [k.kid for k in self.verification_keys()],
        }


__all__ = [
    "CryptographyMLDSA",
    "JwtSigner",
    "MLDSAAlgorithm",
    "MLDSABackend",
    "MLDSAPrivateKey",
    "MLDSAPublicKey",
    "SignerUnavailable",
    "SigningKey",
    "jwk_thumbprint",
    "load_signing_key",
    "mldsa_backend",
]
