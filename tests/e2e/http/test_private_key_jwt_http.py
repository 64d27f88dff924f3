"""``private_key_jwt`` client authentication end to end over HTTP (RFC 7523; OpenID Connect Core
1.0 §9; docs/reference/oauth-and-oidc.md), on SQLite and PostgreSQL: a client registered through
the API with its ``jwks`` pushes a request (PAR, ``aud`` = the PAR endpoint), exchanges the code
and revokes a token with assertions (PyJWT-signed); a reused ``jti`` and a wrong ``aud`` are
``invalid_client``; a ``jwks`` with a private key is refused at registration."""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

import jwt
import pytest
from aiohttp.test_utils import TestClient
from cryptography.hazmat.primitives.asymmetric import ec

from tests.e2e.helpers import ONE_PER_BACKEND, MakeClient, bearer, container_of
from tests.e2e.http.test_oauth_http import machines
from tests.e2e.oidc_helpers import (
    ISSUER,
    REDIRECT,
    Registered,
    auth_params,
    code_via_browser,
    pkce,
    register_user,
)

BEARER_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


def _assertion(client_id: str, key: Any, aud: str, jti: str | None = None) -> str:
    now = int(time.time())
    claims = {"iss": client_id, "sub": client_id, "aud": aud, "iat": now, "exp": now + 60,
              "jti": jti or secrets.token_urlsafe(16)}  # fmt: skip
    return jwt.encode(claims, key, "ES256", {"kid": "k1"})


def _auth(client_id: str, key: Any, aud: str, jti: str | None = None) -> dict[str, str]:
    return {"client_assertion_type": BEARER_TYPE,
            "client_assertion": _assertion(client_id, key, aud, jti)}  # fmt: skip


async def _registered(client: TestClient, admin: str, key: Any) -> dict[str, Any]:
    public = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
    body = {"name": "kiosk", "scopes": [], "grant_types": ["authorization_code"],
            "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt",
            "jwks": {"keys": [{**public, "kid": "k1"}]}}  # fmt: skip
    resp = await client.post("/oauth/clients", json=body, headers=bearer(admin))
    assert resp.status == 201, await resp.text()
    return await resp.json()  # type: ignore[no-any-return]


async def test_par_code_exchange_and_revocation_with_assertions(make_client: MakeClient) -> None:
    m = await machines(make_client)
    client = m.http
    key = ec.generate_private_key(ec.SECP256R1())
    made = await _registered(client, m.admin, key)
    client_id = made["client_id"]
    assert made["token_endpoint_auth_method"] == "private_key_jwt"
    assert made["jwks"]["keys"][0]["kid"] == "k1"
    doc = await (await client.get("/.well-known/openid-configuration")).json()
    assert "private_key_jwt" in doc["token_endpoint_auth_methods_supported"]
    assert "ES256" in doc["token_endpoint_auth_signing_alg_values_supported"]

    await register_user(client, "kim@example.com")
    verifier, challenge = pkce()
    async with container_of(client).storage().read() as uow:
        record = await uow.clients.get(client_id)
    assert record is not None
    app = Registered(client_id, None, record)
    params = auth_params(app, challenge)
    resp = await client.post(
        "/oauth/par", data={**params, **_auth(client_id, key, ISSUER + "/oauth/par")}
    )
    assert resp.status == 201, await resp.text()
    uri = (await resp.json())["request_uri"]
    callback = await code_via_browser(
        client, app, {"client_id": client_id, "request_uri": uri}, email="kim@example.com"
    )
    jti = secrets.token_urlsafe(16)
    form = {"grant_type": "authorization_code", "code": callback["code"],
            "redirect_uri": REDIRECT, "code_verifier": verifier,
            **_auth(client_id, key, ISSUER + "/oauth/token", jti)}  # fmt: skip
    resp = await client.post("/oauth/token", data=form)
    assert resp.status == 200, await resp.text()
    tokens = await resp.json()
    # the same jti again: a replay
    resp = await client.post("/oauth/token", data=form)
    assert resp.status == 401 and (await resp.json())["error"] == "invalid_client"
    # an assertion for another audience
    resp = await client.post("/oauth/revoke", data={
        "token": tokens["access_token"], **_auth(client_id, key, "https://elsewhere/token")})  # fmt: skip
    assert resp.status == 401
    resp = await client.post("/oauth/revoke", data={
        "token": tokens["access_token"], **_auth(client_id, key, ISSUER)})  # fmt: skip
    assert resp.status == 200, await resp.text()
    # a secret is no way in for this client at the code-flow endpoints
    resp = await client.post("/oauth/par", data={**params, "client_secret": "x" * 43})
    assert resp.status == 401


async def test_a_jwks_must_be_public_keys_and_the_method_needs_one(
    make_client: MakeClient,
) -> None:
    m = await machines(make_client)
    key = ec.generate_private_key(ec.SECP256R1())
    private = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key))
    base = {"name": "x", "scopes": [], "grant_types": ["authorization_code"],
            "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt"}  # fmt: skip
    for extra in ({"jwks": {"keys": [private]}}, {}, {"jwks": {"keys": []}},
                  {"jwks_uri": "http://evil.example/jwks"}):  # fmt: skip
        resp = await m.http.post("/oauth/clients", json={**base, **extra}, headers=bearer(m.admin))
        assert resp.status == 422, (extra, await resp.text())
        fields = [e["field"] for e in (await resp.json())["errors"]]
        assert fields in (["jwks"], ["jwks_uri"]), fields


async def test_a_machine_client_gets_tokens_with_assertions(make_client: MakeClient) -> None:
    """``client_credentials`` with ``private_key_jwt`` (RFC 7523 §2.2): an assertion whose
    ``aud`` is the token endpoint gets a token for the client; the same ``jti`` again, another
    client's id in ``iss``/``sub``, or an assertion beside a secret are refused, and no token
    is issued (one ``client.token_issued`` row)."""
    m = await machines(make_client)
    client = m.http
    key = ec.generate_private_key(ec.SECP256R1())
    public = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
    body = {"name": "robot", "scopes": ["read"], "grant_types": ["client_credentials"],
            "token_endpoint_auth_method": "private_key_jwt",
            "jwks": {"keys": [{**public, "kid": "k1"}]}}  # fmt: skip
    resp = await client.post("/oauth/clients", json=body, headers=bearer(m.admin))
    assert resp.status == 201, await resp.text()
    client_id = (await resp.json())["client_id"]
    token_url = f"{ISSUER}/oauth/token"
    jti = secrets.token_urlsafe(16)
    form = {"grant_type": "client_credentials", **_auth(client_id, key, token_url, jti)}
    resp = await client.post("/oauth/token", data=form)
    assert resp.status == 200, await resp.text()
    claims = jwt.decode((await resp.json())["access_token"], options={"verify_signature": False})
    assert claims["sub"] == client_id and claims["scope"] == "read"
    resp = await client.post("/oauth/token", data=form)  # the same jti
    assert resp.status == 401 and (await resp.json())["error"] == "invalid_client"
    other = {"grant_type": "client_credentials", **_auth("not-this-client", key, token_url)}
    resp = await client.post("/oauth/token", data={**other, "client_id": client_id})
    assert resp.status in (400, 401)
    both = {"grant_type": "client_credentials", "client_secret": "x",
            **_auth(client_id, key, token_url)}  # fmt: skip
    resp = await client.post("/oauth/token", data={**both, "client_id": client_id})
    assert resp.status == 400 and (await resp.json())["error"] == "invalid_request"
    resp = await client.get("/audit-events", params={"type": "client.token_issued"},
                            headers=bearer(m.admin))  # fmt: skip
    issued = [e for e in (await resp.json())["items"] if e["details"].get("client_id") == client_id]
    assert len(issued) == 1, issued
