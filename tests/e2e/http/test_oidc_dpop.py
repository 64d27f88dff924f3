"""DPoP in the code flow over HTTP, on SQLite and PostgreSQL (RFC 9449;
docs/reference/oauth-and-oidc.md; research §6 OP-22, OP-24): a public client that sends a proof at
the token endpoint gets a DPoP-bound access token and refresh token; userinfo takes the token only
with a fresh proof of that key (a replayed proof is refused: its ``jti`` is claimed like at the
token endpoint); the refresh token needs a proof of the same key."""

from __future__ import annotations

import base64
import hashlib
import time
import uuid
from typing import Any

import jwt
import pytest
from aiohttp.test_utils import TestClient
from cryptography.hazmat.primitives.asymmetric import ec

from tests.e2e.helpers import ONE_PER_BACKEND
from tests.e2e.http.test_dpop_http import proof, public_jwk, thumbprint
from tests.e2e.oidc_helpers import (
    ISSUER,
    Registered,
    auth_params,
    code_via_browser,
    pkce,
    register_client,
    register_user,
    verify_id_token,
)

TOKEN_URL = ISSUER + "/oauth/token"
USERINFO_URL = ISSUER + "/oauth/userinfo"


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


def _ath(token: str) -> str:
    digest = hashlib.sha256(token.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def userinfo_proof(key: ec.EllipticCurvePrivateKey, token: str, method: str = "GET") -> str:
    """A proof for ``method`` /oauth/userinfo bound to ``token`` (``ath``)."""
    claims = {"htm": method, "iat": int(time.time()), "jti": uuid.uuid4().hex, "ath": _ath(token)}
    return proof(key, USERINFO_URL, claims=claims)


async def token_call(
    client: TestClient,
    app: Registered,
    form: dict[str, str],
    key: ec.EllipticCurvePrivateKey | None,
) -> Any:
    headers = {} if key is None else {"DPoP": proof(key, TOKEN_URL)}
    return await client.post("/oauth/token", data={"client_id": app.id, **form}, headers=headers)


async def _bound_tokens(
    client: TestClient, key: ec.EllipticCurvePrivateKey
) -> tuple[Registered, dict[str, Any]]:
    await register_user(client)
    app = await register_client(client, public=True, skip_consent=True)
    verifier, challenge = pkce()
    params = auth_params(app, challenge, scope="openid email offline_access")
    callback = await code_via_browser(client, app, params)
    form = {"grant_type": "authorization_code", "code": callback["code"],
            "redirect_uri": params["redirect_uri"], "code_verifier": verifier}  # fmt: skip
    resp = await token_call(client, app, form, key)
    assert resp.status == 200, await resp.text()
    return app, await resp.json()


async def test_userinfo_takes_a_proof_once(client: TestClient) -> None:
    """OP-22 (DPoP, RFC 9449 §7): the bound token at userinfo needs the DPoP scheme and a proof
    of its key; the same proof sent again is refused (invalid_dpop_proof, 401), a new one is
    taken."""
    key = ec.generate_private_key(ec.SECP256R1())
    _, tokens = await _bound_tokens(client, key)
    assert tokens["token_type"] == "DPoP"
    access = tokens["access_token"]
    resp = await client.get("/oauth/userinfo", headers={"Authorization": f"Bearer {access}"})
    assert resp.status == 401
    good = userinfo_proof(key, access)
    headers = {"Authorization": f"DPoP {access}", "DPoP": good}
    resp = await client.get("/oauth/userinfo", headers=headers)
    assert resp.status == 200, await resp.text()
    assert "email" in await resp.json()
    resp = await client.get("/oauth/userinfo", headers=headers)  # the same proof: a replay
    assert resp.status == 401
    assert (await resp.json())["error"] == "invalid_dpop_proof"
    assert resp.headers["WWW-Authenticate"].startswith("DPoP ")
    other = ec.generate_private_key(ec.SECP256R1())
    resp = await client.get("/oauth/userinfo", headers={
        "Authorization": f"DPoP {access}", "DPoP": userinfo_proof(other, access)})  # fmt: skip
    assert resp.status == 401
    resp = await client.post("/oauth/userinfo", headers={
        "Authorization": f"DPoP {access}", "DPoP": userinfo_proof(key, access, "POST")})  # fmt: skip
    assert resp.status == 200, await resp.text()


async def test_public_client_refresh_token_is_bound_to_the_key(client: TestClient) -> None:
    """OP-24 (RFC 9449 §5): a public client's refresh token issued with a proof is refreshed
    only with a proof of the same key: none or another key's → invalid_grant (and the token
    still works after); with the key → new DPoP-bound tokens, the ID token keeping sub and
    auth_time."""
    key = ec.generate_private_key(ec.SECP256R1())
    app, tokens = await _bound_tokens(client, key)
    form = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]}
    resp = await token_call(client, app, form, None)
    assert resp.status == 400 and (await resp.json())["error"] == "invalid_grant"
    resp = await token_call(client, app, form, ec.generate_private_key(ec.SECP256R1()))
    assert resp.status == 400 and (await resp.json())["error"] == "invalid_grant"
    resp = await token_call(client, app, form, key)
    assert resp.status == 200, await resp.text()
    renewed = await resp.json()
    assert renewed["token_type"] == "DPoP"
    first = await verify_id_token(client, tokens["id_token"], app.id)
    again = await verify_id_token(client, renewed["id_token"], app.id)
    assert (again["sub"], again["auth_time"]) == (first["sub"], first["auth_time"])
    access = renewed["access_token"]
    resp = await client.get("/oauth/userinfo", headers={
        "Authorization": f"DPoP {access}", "DPoP": userinfo_proof(key, access)})  # fmt: skip
    assert resp.status == 200, await resp.text()
    cnf = jwt.decode(access, options={"verify_signature": False})["cnf"]
    assert cnf == {"jkt": thumbprint(public_jwk(key))}  # RFC 9449 §6.1
