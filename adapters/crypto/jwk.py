"""JWK encoding helpers: base64url without padding and RFC 7638 thumbprints.

The lowest layer of ``adapters.crypto``: it knows JSON Web Keys (RFC 7517) as plain mappings
and imports nothing from the other crypto modules, so the ML-DSA module (AKP JWKs) and the key
ring (``kid`` values) can both build on it.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from typing import Any

THUMBPRINT_MEMBERS: Mapping[str, tuple[str, ...]] = {
    "RSA": ("e", "kty", "n"),
    "EC": ("crv", "kty", "x", "y"),
    "OKP": ("crv", "kty", "x"),
    "AKP": ("alg", "kty", "pub"),
}
"""The required members of each key type that an RFC 7638 thumbprint covers."""


def b64url(data: bytes) -> str:
    """``data`` as unpadded base64url text (RFC 7515 section 2, as JWK members use it)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(data: str) -> bytes:
    """The bytes of unpadded base64url text (the inverse of ``b64url``).

    Raises ``ValueError`` (``binascii.Error``) on text that is not base64url.
    """
    return base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))


def jwk_thumbprint(jwk: Mapping[str, Any]) -> str:
    """RFC 7638 SHA-256 thumbprint (base64url, 43 characters) over the required members of ``jwk``.

    RSA: ``e, kty, n``; EC: ``crv, kty, x, y``; OKP (RFC 8037): ``crv, kty, x``; AKP (RFC 9964
    section 6): ``alg, kty, pub``. Raises ``KeyError`` for
    another ``kty`` or a missing member.
    """
    members = THUMBPRINT_MEMBERS[jwk["kty"]]
    canonical = json.dumps({m: jwk[m] for m in members}, separators=(",", ":"), sort_keys=True)
    return b64url(hashlib.sha256(canonical.encode("utf-8")).digest())


__all__ = ["THUMBPRINT_MEMBERS", "b64url", "b64url_decode", "jwk_thumbprint"]
