"""ID token validation (OpenID Connect Core §3.1.3.7) with PyJWT: the provider's announced
asymmetric algorithms (never ``none``, never an HMAC), the key by ``kid`` (absent ``kid``: the
one signing key, else refused), ``iss`` exact, ``aud`` containing our ``client_id``, ``azp``
when ``aud`` has several values (and equal to ``client_id`` whenever present), ``exp`` / ``iat``
with 60 s of leeway, ``sub`` required, ``nonce`` compared in constant time."""

from __future__ import annotations

import hmac
from collections.abc import Mapping, Sequence
from typing import Any

import jwt

from application.ports import FederationFailed

__all__ = ["ASYMMETRIC", "LEEWAY", "choose_key", "validate"]

ASYMMETRIC = frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384",
                        "ES512", "EdDSA", "Ed25519"})  # fmt: skip
"""The JWS algorithms an upstream ID token may use (RFC 7518; RFC 8037)."""
LEEWAY = 60
"""Clock skew allowed on ``exp`` and ``iat``, seconds (docs/reference/federation.md)."""


def header_of(token: str) -> dict[str, Any]:
    """The token's JOSE header, unverified. Raises ``FederationFailed`` (``id_token_invalid``)."""
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        raise FederationFailed("id_token_invalid", "not a JWS") from None
    return header


def allowed_algorithm(header: Mapping[str, Any], announced: Sequence[str] | None) -> str:
    """The header's ``alg`` when it is asymmetric and announced by the provider
    (``id_token_signing_alg_values_supported``; RS256 when it announces none)."""
    alg = header.get("alg")
    allowed = set(announced or ("RS256",)) & ASYMMETRIC
    if not isinstance(alg, str) or alg not in allowed:
        raise FederationFailed("id_token_alg", f"algorithm {alg!r} is not accepted")
    return alg


def choose_key(jwks: Mapping[str, Any], kid: str | None, alg: str) -> Any | None:
    """The signing key of ``jwks`` (a JWK Set) for ``kid``; without a ``kid``, the one signing
    key of the set (None when there are several: ``kid`` absent with several keys is refused).
    None when no key matches (the caller fetches the set again once)."""
    candidates = []
    for entry in jwks.get("keys", []) if isinstance(jwks.get("keys"), list) else []:
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
            continue
        if kid is not None and entry.get("kid") != kid:
            continue
        if entry.get("alg") not in (None, alg):
            continue
        candidates.append(entry)
    if len(candidates) != 1:
        return None
    try:
        return jwt.PyJWK.from_dict(candidates[0], algorithm=alg).key
    except (jwt.PyJWTError, ValueError, TypeError, KeyError):
        return None


def validate(
    token: str, key: Any, alg: str, issuer: str, client_id: str, nonce: str | None
) -> dict[str, Any]:
    """The verified claims of ``token`` signed by ``key`` with ``alg``; raises
    ``FederationFailed`` naming the check that failed. ``nonce`` None: the token must carry
    none (a native app that sent no nonce); else it must carry exactly that one."""
    try:
        claims: dict[str, Any] = jwt.decode(
            token, key=key, algorithms=[alg], audience=client_id, issuer=issuer, leeway=LEEWAY,
            options={"require": ["iss", "sub", "aud", "exp", "iat"], "verify_iat": True},
        )  # fmt: skip
    except jwt.InvalidIssuerError:
        raise FederationFailed("id_token_iss", "issuer differs") from None
    except jwt.InvalidAudienceError:
        raise FederationFailed("id_token_aud", "audience lacks our client_id") from None
    except jwt.ExpiredSignatureError:
        raise FederationFailed("id_token_expired") from None
    except jwt.InvalidSignatureError:
        raise FederationFailed("id_token_signature") from None
    except jwt.PyJWTError as exc:
        raise FederationFailed("id_token_invalid", type(exc).__name__) from None
    if not isinstance(claims.get("sub"), str) or not claims["sub"] or len(claims["sub"]) > 255:
        raise FederationFailed("id_token_invalid", "sub")
    aud = claims["aud"]
    azp = claims.get("azp")
    if (isinstance(aud, list) and len(aud) > 1 and azp is None) or (
        azp is not None and azp != client_id
    ):
        raise FederationFailed("id_token_azp", "azp is not our client_id")
    carried = claims.get("nonce")
    if nonce is None:
        if carried is not None:
            raise FederationFailed("nonce_mismatch", "the token carries a nonce")
    elif not isinstance(carried, str) or not hmac.compare_digest(carried.encode(), nonce.encode()):
        raise FederationFailed("nonce_mismatch")
    return claims
