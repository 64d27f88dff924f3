"""The JWS layer of ``adapters.crypto.jwt_signer`` (RFC 7515; RFC 8725 §3.1): a private
registry of exactly ``RS256``, ``ML-DSA-65`` and ``ML-DSA-87`` (``new_jws``; ``none`` and the
HMAC algorithms are not even registered, and PyJWT's process-wide registry is left alone),
its strict and fast base64url segment check (``StrictJWS``), and the claim checks made after
the signature against the injected clock (``VerifyCheck``, ``check_claims``).
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Mapping
from typing import Any

import attrs
import jwt
from jwt.exceptions import DecodeError
from jwt.utils import base64url_decode, base64url_encode

from adapters.crypto.mldsa import MLDSA_ALGORITHMS, MLDSAAlgorithm
from domain.errors import InvalidToken

__all__ = ["RegistryJWT", "StrictJWS", "VerifyCheck", "check_claims", "new_jws"]


class RegistryJWT(jwt.PyJWT):
    """A PyJWT whose JWS layer is ``jws``, the signer's own algorithm registry (``new_jws``)."""

    def __init__(self, jws: jwt.PyJWS) -> None:
        super().__init__(options={"verify_signature": True})
        self._jws = jws


_BASE64URL = re.compile(rb"[A-Za-z0-9_-]*")


class StrictJWS(jwt.PyJWS):
    """PyJWT's JWS with its segment check done by a compiled pattern.

    PyJWT checks that every byte of a segment is in the base64url alphabet with a Python
    generator, byte by byte: ~150 µs for the 6 KiB signature segment of an ML-DSA-65 token,
    more than the signature verification itself. This override keeps every rule of PyJWT's
    ``_decode_base64url_segment`` (at most two ``=`` of padding and only on a length that is a
    multiple of 4, no length ≡ 1 mod 4, only base64url characters, canonical encoding) and
    raises the same ``DecodeError``; ``tests/contract/test_signer_contract.py`` holds it to them.
    """

    @staticmethod
    def _decode_base64url_segment(segment: bytes, name: str) -> bytes:
        stripped = segment.rstrip(b"=")
        padding = len(segment) - len(stripped)
        if (
            padding > 2
            or (padding and len(segment) % 4 != 0)
            or len(stripped) % 4 == 1
            or not _BASE64URL.fullmatch(stripped)
        ):
            raise DecodeError(f"Invalid {name} padding")
        try:
            decoded = base64url_decode(stripped)
        except (TypeError, binascii.Error) as err:
            raise DecodeError(f"Invalid {name} padding") from err
        if base64url_encode(decoded) != stripped:
            raise DecodeError(f"Invalid {name} padding")
        return decoded


def new_jws() -> jwt.PyJWS:
    """A JWS registry of exactly ``RS256``, ``ML-DSA-65`` and ``ML-DSA-87`` (RFC 8725 3.1)."""
    jws = StrictJWS(algorithms=["RS256"], options={"enforce_minimum_key_length": True})
    for alg in MLDSA_ALGORITHMS:
        jws.register_algorithm(alg, MLDSAAlgorithm(alg))
    return jws


def _int_claim(claims: Mapping[str, Any], name: str) -> int:
    value = claims.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidToken(f"claim {name!r} must be an integer")
    return value


@attrs.frozen
class VerifyCheck:
    """What a verification checks besides the signature: ``iss``, ``aud`` (None: any), the
    ``exp``/``iat`` skew in seconds, the header's ``typ`` (lower-case)."""

    issuer: str
    audience: str | None
    leeway: int
    typ: str
    verify_exp: bool = True


def check_claims(claims: Mapping[str, Any], check: VerifyCheck, now: float) -> None:
    """The checks made after the signature, against ``now`` (Unix s, the injected clock) with
    ``check.leeway`` seconds of skew (RFC 7519 §4.1): ``exp`` (unless ``check.verify_exp`` is
    false), ``iat`` not in the future, ``nbf`` if present; ``sub`` and ``jti`` strings. Raises
    ``InvalidToken`` for the first that fails."""
    leeway = check.leeway
    if _int_claim(claims, "exp") <= now - leeway and check.verify_exp:
        raise InvalidToken("token expired")
    if _int_claim(claims, "iat") > now + leeway:
        raise InvalidToken("token issued in the future")
    if "nbf" in claims and _int_claim(claims, "nbf") > now + leeway:
        raise InvalidToken("token not yet valid")
    if not isinstance(claims.get("sub"), str) or not isinstance(claims.get("jti"), str):
        raise InvalidToken("sub and jti must be strings")
