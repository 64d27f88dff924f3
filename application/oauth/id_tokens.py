"""ID tokens (OpenID Connect Core 1.0 §2, §3.1.3.6; docs/reference/oauth-and-oidc.md): their
algorithm, their claims, and the check of an ``id_token_hint`` (ours, expired allowed)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from application.ports import Signer
from application.shared.settings import AuthSettings
from application.shared.steps import new_id
from domain.clients import Client
from domain.errors import InvalidToken
from domain.model import User

__all__ = [
    "ID_TOKEN_TYPE",
    "authsvc_claims",
    "id_token_alg",
    "id_token_claims",
    "verify_id_token_hint",
]

ID_TOKEN_TYPE = "JWT"  # noqa: S105 - a media type, not a secret
"""The JWS ``typ`` of an ID token (OIDC Core §2 recommends none or ``JWT``)."""


def id_token_alg(auth: AuthSettings, client: Client) -> str:
    """The ``alg`` of ``client``'s ID tokens (docs/reference/oauth-and-oidc.md and
    docs/reference/tokens-and-sessions.md): its ``id_token_signed_response_alg`` when listed in
    ``auth.algorithms``, else RS256 when listed (OIDC Core §15.1: every relying party can verify
    it), else ``auth.algorithm``."""
    listed = auth.signing_algorithms
    chosen = client.id_token_signed_response_alg
    if chosen is not None and chosen in listed:
        return chosen
    return "RS256" if "RS256" in listed else auth.algorithm


def id_token_claims(
    *,
    issuer: str,
    client_id: str,
    user_id: str,
    now: datetime,
    ttl: int,
    auth_time: datetime,
    sid: str,
    amr: Sequence[str],
    acr: str,
    nonce: str | None,
) -> dict[str, Any]:
    """``iss, sub, aud (= client_id), azp, exp (iat + ttl s), iat, auth_time, sid, amr, acr,
    jti`` [+ ``nonce`` when the request had one]; times in Unix seconds. ``profile`` and
    ``email`` claims go to userinfo, not here (OIDC Core §5.4)."""
    iat = int(now.timestamp())
    claims: dict[str, Any] = {
        "iss": issuer, "sub": user_id, "aud": client_id, "azp": client_id,
        "iat": iat, "exp": iat + ttl, "auth_time": int(auth_time.timestamp()),
        "sid": sid, "amr": list(amr), "acr": acr, "jti": new_id(),
    }  # fmt: skip
    if nonce is not None:
        claims["nonce"] = nonce
    return claims


def authsvc_claims(user: User, groups: Sequence[str]) -> dict[str, Any]:
    """The claims of the ``authsvc`` scope, in the ID token and at userinfo alike (OIDC Core
    §5.4 leaves other scopes' claims to the provider; docs/adr/0032): ``org_id``, ``role``
    (its name) and ``groups`` (group ids)."""
    return {"org_id": user.org_id, "role": user.role.value, "groups": list(groups)}


async def verify_id_token_hint(
    signer: Signer, auth: AuthSettings, token: str
) -> dict[str, Any] | None:
    """The claims of ``token`` if it is an ID token this service signed with one of its keys
    (expired allowed: OIDC Core §3.1.2.1), else None — a foreign key, ``alg: none``, another
    issuer or an access token (no ``azp`` and ``auth_time``) included."""
    try:
        claims = await signer.verify(
            token, issuer=auth.issuer, audience=None, leeway=auth.leeway, verify_exp=False
        )
    except InvalidToken:
        return None
    if not isinstance(claims.get("azp"), str) or "auth_time" not in claims:
        return None
    return claims
