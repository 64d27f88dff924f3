"""DPoP proofs (RFC 9449 §4.3) checked with PyJWT: the ``DpopVerifier`` port.

A proof is a JWS whose header carries the public key (``jwk``) that signed it. Only asymmetric
algorithms are accepted (never ``none`` or HMAC), a key with private members is refused, and the
RFC 7638 thumbprint of the key is what a token gets bound to (``cnf.jkt``). The replay of a
proof's ``jti`` is checked by the use case against the database (``ClientRepo``).
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import datetime
from typing import Any

import jwt
from jwt.exceptions import MissingRequiredClaimError, PyJWTError
from yarl import URL

from adapters.crypto.jwk import b64url, jwk_thumbprint
from application.ports import DpopProof, DpopVerifier
from domain.errors import InvalidDpopProof

DPOP_ALGORITHMS = ("ES256", "ES384", "ES512", "EdDSA", "PS256", "PS384", "PS512", "RS256")
"""The proof algorithms accepted (asymmetric only), as the metadata lists them."""
_PRIVATE_MEMBERS = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k", "priv"})
_MAX_PROOF_LENGTH = 8192
_MAX_JTI_LENGTH = 256


def normalized_url(url: str) -> str | None:
    """``url`` as DPoP compares ``htu`` with the endpoint's URL (RFC 9449 §4.3 step 9, §7.1),
    in the RFC 3986 §6.2.2 / §6.2.3 normal form that ``yarl`` produces: scheme and host
    lower-case, the scheme's default port (80, 443) dropped, percent-encoding normalised
    (unreserved characters decoded, hex digits upper-case, reserved ones kept encoded), dot
    segments removed, an empty path as ``/``; query and fragment removed. The path keeps its
    case and any userinfo stays (so it never matches an endpoint without one).

    Returns None for anything that is not an absolute ``http``/``https`` URL with a host (a
    relative reference, a port out of range, another scheme): it matches nothing."""
    try:
        parsed = URL(url)
    except (ValueError, TypeError):
        return None
    if not parsed.absolute or parsed.scheme not in ("http", "https") or not parsed.host:
        return None
    return str(parsed.with_path(parsed.raw_path, encoded=True).with_query(None).with_fragment(None))


class JwtDpopVerifier(DpopVerifier):
    """``DpopVerifier`` on PyJWT (signature and header) and ``jwk_thumbprint`` (RFC 7638)."""

    @property
    def algorithms(self) -> tuple[str, ...]:
        """``DPOP_ALGORITHMS``."""
        return DPOP_ALGORITHMS

    def verify(
        self,
        proof: str,
        method: str,
        urls: tuple[str, ...],
        now: datetime,
        window: int,
        *,
        access_token: str | None = None,
        jkt: str | None = None,
    ) -> DpopProof:
        """See ``DpopVerifier.verify``; raises ``InvalidDpopProof`` naming the failed check."""
        if len(proof) > _MAX_PROOF_LENGTH or proof.count(".") != 2:
            raise InvalidDpopProof("malformed")
        try:
            header = jwt.get_unverified_header(proof)
        except (PyJWTError, ValueError, TypeError):
            raise InvalidDpopProof("malformed") from None
        if header.get("typ") != "dpop+jwt":
            raise InvalidDpopProof("typ")
        alg = header.get("alg")
        if alg not in DPOP_ALGORITHMS:
            raise InvalidDpopProof("alg")
        key, key_jkt = _public_key(header.get("jwk"), alg)
        try:
            claims: dict[str, Any] = jwt.decode(
                proof, key, algorithms=[alg],
                options={"require": ["jti", "htm", "htu", "iat"], "verify_aud": False,
                         "verify_exp": False, "verify_iat": False, "verify_nbf": False},
            )  # fmt: skip
        except MissingRequiredClaimError as e:
            raise InvalidDpopProof(e.claim) from None  # one of jti, htm, htu, iat
        except (PyJWTError, ValueError, TypeError):
            raise InvalidDpopProof("signature") from None
        if claims.get("htm") != method:
            raise InvalidDpopProof("htm")
        htu = claims.get("htu")
        expected = {normalized_url(u) for u in urls} - {None}
        if not isinstance(htu, str) or normalized_url(htu) not in expected:
            raise InvalidDpopProof("htu")
        iat = claims.get("iat")
        if isinstance(iat, bool) or not isinstance(iat, int | float):
            raise InvalidDpopProof("iat")
        if abs(iat - now.timestamp()) > window:
            raise InvalidDpopProof("iat")
        jti = claims.get("jti")
        if not isinstance(jti, str) or not 0 < len(jti) <= _MAX_JTI_LENGTH:
            raise InvalidDpopProof("jti")
        if access_token is not None:
            ath = b64url(hashlib.sha256(access_token.encode("ascii")).digest())
            if not isinstance(claims.get("ath"), str) or not hmac.compare_digest(
                claims["ath"], ath
            ):
                raise InvalidDpopProof("ath")
        if jkt is not None and not hmac.compare_digest(key_jkt, jkt):
            raise InvalidDpopProof("jkt")
        nonce = claims.get("nonce")
        return DpopProof(key_jkt, jti, int(iat), nonce if isinstance(nonce, str) else None)


def _public_key(jwk: Any, alg: str) -> tuple[Any, str]:
    """The verification key of a proof's ``jwk`` and its thumbprint; ``InvalidDpopProof``
    (``jwk``) for a key that is not a public JWK of ``alg``'s type."""
    if not isinstance(jwk, dict) or _PRIVATE_MEMBERS & set(jwk):
        raise InvalidDpopProof("jwk")
    try:
        key = jwt.PyJWK.from_dict(jwk, algorithm=alg)
        return key.key, jwk_thumbprint(jwk)
    except (PyJWTError, KeyError, ValueError, TypeError):
        raise InvalidDpopProof("jwk") from None
