"""One signing key (``SigningKey``: its private and public key objects, its public JWK, its
RFC 7638 thumbprint as ``kid``), loaded from key-store material (``load_signing_key``), and one
consistent view of a ``KeyRing`` (``KeySet``). ``mldsa_backend`` picks the ML-DSA backend by its
configured name; it is the one place that knows both backends, so ``mldsa`` and ``oqs`` never
import each other back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

import attrs
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from adapters.crypto.jwk import jwk_thumbprint
from adapters.crypto.key_records import KeyRecord, KeyStoreError, signing_key
from adapters.crypto.mldsa import (
    MLDSA_ALGORITHMS,
    CryptographyMLDSA,
    MLDSAAlgorithm,
    MLDSABackend,
    SignerUnavailable,
)
from application.shared.settings import AuthSettings

__all__ = ["KeySet", "SigningKey", "load_signing_key", "mldsa_backend"]


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


@attrs.frozen
class SigningKey:
    """One key of the signer: ``alg``, ``kid`` (RFC 7638 thumbprint), the private and public
    key objects, its public ``jwk`` (RFC 7517; ``AKP`` per RFC 9964 for ML-DSA), and
    ``verify_until``: None while it is the active key, otherwise the time after which no token
    it signed can still be live."""

    alg: str
    kid: str
    private: Any = attrs.field(repr=False)
    public: Any = attrs.field(repr=False)
    jwk: dict[str, Any]
    verify_until: datetime | None = None


def load_signing_key(alg: str, material: bytes, backend: Callable[[], MLDSABackend]) -> SigningKey:
    """Build a ``SigningKey`` from key-file ``material`` (PKCS#8 PEM or 32-byte seed).

    ``backend`` is called only for an ML-DSA ``alg``. Raises ``KeyStoreError`` if the material
    does not hold a usable key of ``alg`` (RSA: >= 2048 bits), and ``SignerUnavailable`` if the
    ML-DSA backend cannot be used.
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
        jwk.update({"kid": kid, "use": "sig"})
        return SigningKey(alg, kid, mprivate, mpublic, jwk)
    raise KeyStoreError(f"unknown algorithm {alg!r}")


@attrs.frozen
class KeySet:
    """One consistent view of the ring: the ``settings`` it was built for, the ``records`` of
    the keys that sign, may sign or still verify (JWKS order: latest activated first), their
    loaded ``keys`` by kid, and the name of the ML-DSA backend that loaded them."""

    settings: AuthSettings
    records: tuple[KeyRecord, ...]
    keys: Mapping[str, SigningKey]
    backend_name: str

    def signing_record(self, now: datetime, alg: str | None = None) -> KeyRecord:
        """The record of the key that signs ``alg`` tokens (default: ``settings.algorithm``;
        one of ``settings.signing_algorithms``) at ``now``: the schedule's signing key
        (``key_records.signing_key``); if none can (the store changed under us), the one of
        that algorithm activated last, so signing never stops. Raises ``KeyError`` for an
        algorithm the ring does not sign with."""
        alg = alg or self.settings.algorithm
        if alg not in self.settings.signing_algorithms:
            raise KeyError(alg)
        found = signing_key(self.records, alg, now)
        if found is not None and found.kid in self.keys:
            return found
        mine = [r for r in self.records if r.alg == alg and r.kid in self.keys]
        started = [r for r in mine if r.activates_at <= now] or mine
        return max(started, key=lambda r: (r.activates_at, r.kid))
