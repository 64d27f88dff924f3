"""ML-DSA (FIPS 204) for JOSE: key objects, the ``cryptography`` backend, and the PyJWT algorithm.

RFC 9964 puts ML-DSA into JOSE: ``alg`` ``ML-DSA-65``/``ML-DSA-87``, the signature is pure
ML-DSA with an empty context over the JWS signing input (RFC 7515), and public keys are ``AKP``
JWKs ``{"kty": "AKP", "alg", "pub"}``. Private keys are kept as their 32-byte FIPS 204 seed.

The arithmetic comes from a backend (``MLDSABackend``): ``CryptographyMLDSA`` here (OpenSSL >=
3.5, the default) or ``LiboqsMLDSA`` in ``adapters.crypto.oqs``, which builds on this module and
is never imported by it. Both load keys from the same seeds and produce interchangeable
signatures. ``adapters.crypto.key_ring.mldsa_backend`` picks one by its configured name.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, Literal, overload

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from jwt.algorithms import Algorithm
from jwt.exceptions import InvalidKeyError

from adapters.crypto.jwk import b64url, b64url_decode

MLDSA_ALGORITHMS = ("ML-DSA-65", "ML-DSA-87")
"""The JWS ``alg`` values of RFC 9964 that this service signs with."""


class SignerUnavailable(RuntimeError):
    """The configured algorithm cannot be used here (e.g. OpenSSL lacks ML-DSA, liboqs absent).

    Raised at start (``JwtSigner.from_settings``) or on ``apply``; the message says how to fix it.
    """


# --------------------------------------------------------------------------------------------
# Key objects and backends


class MLDSAPublicKey(ABC):
    """An ML-DSA (FIPS 204) public key of one backend; ``alg`` is ``ML-DSA-65`` or ``ML-DSA-87``.

    Published as the ``pub`` member of an ``AKP`` JWK (RFC 9964 section 6).
    """

    alg: str

    @abstractmethod
    def public_bytes(self) -> bytes:
        """The raw FIPS 204 encoded public key (1952 bytes for -65, 2592 for -87)."""

    @abstractmethod
    def verify(self, signature: bytes, data: bytes) -> bool:
        """True iff ``signature`` is a pure ML-DSA signature (empty context) of ``data``.

        False for any invalid signature; a backend may raise ``ValueError`` on a malformed
        one instead, which ``MLDSAAlgorithm.verify`` turns into False.
        """


class MLDSAPrivateKey(ABC):
    """An ML-DSA (FIPS 204) private key of one backend, loaded from its 32-byte seed."""

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
        """The key pair FIPS 204 ``ML-DSA.KeyGen_internal(seed)`` derives (seed: 32 bytes).

        Raises ``ValueError`` for a seed of another length, ``SignerUnavailable`` when the
        backend cannot derive the key here.
        """

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


# --------------------------------------------------------------------------------------------
# PyJWT algorithm for ML-DSA (RFC 9964)


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
        """``key`` if it is an ML-DSA key object of this ``alg``; else ``InvalidKeyError``."""
        if isinstance(key, MLDSAPrivateKey | MLDSAPublicKey) and key.alg == self.alg:
            return key
        raise InvalidKeyError(f"expected an {self.alg} key object")

    def sign(self, msg: bytes, key: MLDSAPrivateKey | MLDSAPublicKey) -> bytes:
        """The ML-DSA signature of the JWS signing input ``msg`` (3309 or 4627 bytes).

        Raises ``InvalidKeyError`` for a public key.
        """
        if not isinstance(key, MLDSAPrivateKey):
            raise InvalidKeyError("signing needs a private key")
        return key.sign(msg)

    def verify(self, msg: bytes, key: MLDSAPrivateKey | MLDSAPublicKey, sig: bytes) -> bool:
        """True iff ``sig`` is a valid signature of ``msg`` under ``key`` (or its public half)."""
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
        jwk = {"kty": "AKP", "alg": public.alg, "pub": b64url(public.public_bytes())}
        return jwk if as_dict else json.dumps(jwk)

    @staticmethod
    def from_jwk(jwk: str | Mapping[str, Any]) -> MLDSAPublicKey:
        """A public key (``cryptography`` backend) from an AKP JWK. Raises ``InvalidKeyError``."""
        obj = json.loads(jwk) if isinstance(jwk, str) else dict(jwk)
        if obj.get("kty") != "AKP" or obj.get("alg") not in MLDSA_ALGORITHMS:
            raise InvalidKeyError("not an ML-DSA AKP JWK")
        try:
            return CryptographyMLDSA().public_key_from_bytes(obj["alg"], b64url_decode(obj["pub"]))
        except (KeyError, ValueError, TypeError) as e:
            raise InvalidKeyError(f"malformed AKP JWK: {e}") from e


__all__ = [
    "MLDSA_ALGORITHMS",
    "CryptographyMLDSA",
    "MLDSAAlgorithm",
    "MLDSABackend",
    "MLDSAPrivateKey",
    "MLDSAPublicKey",
    "SignerUnavailable",
]
