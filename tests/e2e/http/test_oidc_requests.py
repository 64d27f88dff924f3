"""More authorization and token requests over HTTP, on SQLite and PostgreSQL
(docs/reference/oauth-and-oidc.md; research §6 OP-07, OP-10, OP-13, OP-18, OP-19, OP-20): parameter
order, loopback redirect URIs, expired codes, forged ID-token hints, accepted locales, the acr asked
for."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any
from urllib.parse import urlencode

import jwt
import pytest
from aiohttp.test_utils import TestClient
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.e2e.helpers import ONE_PER_BACKEND, PASSWORD, MakeClient, bearer, container_of
from tests.e2e.oidc_helpers import (
    ISSUER,
    REDIRECT,
    auth_params,
    authorize,
    code_via_browser,
    exchange,
    full_flow,
    pkce,
    query_of,
    refresh,
    register_client,
    register_user,
    verify_id_token,
)


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


async def test_shuffled_parameter_order_and_locales(client: TestClient) -> None:
    """OP-07: the parameters in another order (and the scopes reversed) succeed; OP-19:
    claims_locales, ui_locales and display=popup are accepted without error."""
    await register_user(client)
    app = await register_client(client, skip_consent=True)
    verifier, challenge = pkce()
    params = auth_params(app, challenge, scope="email openid", claims_locales="se",
                         ui_locales="se fr", display="popup")  # fmt: skip
    shuffled = sorted(params.items(), reverse=True)  # state ... client_id ... code_challenge
    assert [k for k, _ in shuffled] != list(params)
    resp = await client.get("/oauth/authorize?" + urlencode(shuffled), allow_redirects=False)
    assert resp.headers["Location"].startswith("/ui/login?"), resp.headers["Location"]
    callback = await code_via_browser(client, app, dict(shuffled))
    assert callback["state"] == "st-1" and callback["iss"] == ISSUER
    resp = await exchange(client, app, callback["code"], verifier)
    assert resp.status == 200, await resp.text()
    assert (await resp.json())["scope"] == "email openid"


async def _admin(client: TestClient) -> str:
    await container_of(client).create_superadmin()("root@example.com", PASSWORD)
    resp = await client.post("/login", json={"email": "root@example.com", "password": PASSWORD})
    return str((await resp.json())["access_token"])


async def test_loopback_redirect_uris(client: TestClient) -> None:
    """OP-10 (RFC 8252 §7.3): a registered http://127.0.0.1/cb or http://[::1]/cb matches any
    port; http://localhost:3000/cb matches only that port; http://evil.example/cb is never
    registrable (422)."""
    admin = await _admin(client)
    body: dict[str, Any] = {
        "name": "native", "scopes": [], "public": True, "skip_consent": True,
        "grant_types": ["authorization_code"],
        "redirect_uris": ["http://127.0.0.1/cb", "http://[::1]/cb", "http://localhost:3000/cb"],
    }  # fmt: skip
    resp = await client.post("/oauth/clients", json=body, headers=bearer(admin))
    assert resp.status == 201, await resp.text()
    client_id = (await resp.json())["client_id"]
    for bad in ("http://evil.example/cb", "http://127.0.0.2.evil.example/cb"):
        resp = await client.post("/oauth/clients", json={**body, "redirect_uris": [bad]},
                                 headers=bearer(admin))  # fmt: skip
        assert resp.status == 422, bad
        resp = await client.patch(f"/oauth/clients/{client_id}", json={"redirect_uris": [bad]},
                                  headers=bearer(admin))  # fmt: skip
        assert resp.status == 422, bad
    _, challenge = pkce()
    base = {"response_type": "code", "client_id": client_id, "scope": "openid",
            "code_challenge": challenge, "code_challenge_method": "S256"}  # fmt: skip
    for uri in ("http://127.0.0.1:51234/cb", "http://127.0.0.1/cb", "http://[::1]:4321/cb",
                "http://localhost:3000/cb"):  # fmt: skip
        resp = await authorize(client, {**base, "redirect_uri": uri})
        assert resp.status == 303 and resp.headers["Location"].startswith("/ui/login?"), uri
    for uri in ("http://localhost:3001/cb", "http://localhost/cb", "http://127.0.0.1:80/other",
                "http://evil.example/cb"):  # fmt: skip
        resp = await authorize(client, {**base, "redirect_uri": uri})
        assert resp.status == 400 and "Location" not in resp.headers, uri
    await register_user(client)
    from tests.e2e.oidc_helpers import sign_in

    resp = await authorize(client, {**base, "redirect_uri": "http://127.0.0.1:51234/cb"})
    location = await sign_in(client, query_of(resp.headers["Location"])["return_to"])
    resp = await client.get(location, allow_redirects=False)
    assert resp.headers["Location"].startswith("http://127.0.0.1:51234/cb?code=")


async def test_expired_code_is_refused_and_revokes_nothing(make_client: MakeClient) -> None:
    """OP-13: with oidc.code_ttl = 1 s, a code exchanged after 1.5 s → invalid_grant; a code
    exchanged in time and presented again after it expired → invalid_grant and nothing is
    revoked (the first exchange's access and refresh tokens still work)."""
    client = await make_client({"AUTHSVC_OIDC__CODE_TTL": "1"})
    await register_user(client)
    app = await register_client(client, skip_consent=True)
    verifier, challenge = pkce()
    late = await code_via_browser(client, app, auth_params(app, challenge))
    params = auth_params(app, challenge, scope="openid offline_access")
    early = await code_via_browser(client, app, params)
    resp = await exchange(client, app, early["code"], verifier)
    assert resp.status == 200, await resp.text()
    tokens = await resp.json()
    await asyncio.sleep(1.5)
    for code in (late["code"], early["code"]):
        resp = await exchange(client, app, code, verifier)
        assert resp.status == 400 and (await resp.json())["error"] == "invalid_grant"
    resp = await client.get("/oauth/userinfo", headers=bearer(tokens["access_token"]))
    assert resp.status == 200, await resp.text()
    resp = await refresh(client, app, tokens["refresh_token"])
    assert resp.status == 200, await resp.text()


def _b64(obj: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()


async def test_forged_id_token_hints_are_invalid_request(client: TestClient) -> None:
    """OP-18: an id_token_hint with our claims but signed by a foreign key (with our kid), or
    re-written as alg none → invalid_request back to the client with state and iss, no code;
    the genuine hint is taken."""
    await register_user(client)
    app = await register_client(client, skip_consent=True)
    tokens, _ = await full_flow(client, app)
    hint = tokens["id_token"]
    claims = await verify_id_token(client, hint, app.id)
    header = jwt.get_unverified_header(hint)
    foreign = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    forged = jwt.encode(claims, foreign, algorithm="RS256", headers={"kid": header["kid"]})
    unsigned = f"{_b64({**header, 'alg': 'none'})}.{_b64(claims)}."
    _, challenge = pkce()
    for bad in (forged, unsigned, hint[:-4] + "AAAA"):
        resp = await authorize(client, auth_params(app, challenge, id_token_hint=bad))
        assert resp.status == 303
        query = query_of(resp.headers["Location"])
        assert resp.headers["Location"].startswith(REDIRECT)
        assert query["error"] == "invalid_request" and "code" not in query
        assert query["state"] == "st-1" and query["iss"] == ISSUER
    resp = await authorize(client, auth_params(app, challenge, id_token_hint=hint))
    assert "code" in query_of(resp.headers["Location"])


async def test_acr_values_are_accepted_and_acr_returned(client: TestClient) -> None:
    """OP-20: acr_values=1 (advertised) succeeds and the ID token's acr is "1" (a password)."""
    await register_user(client)
    app = await register_client(client, skip_consent=True)
    discovery = await (await client.get("/.well-known/openid-configuration")).json()
    assert "1" in discovery["acr_values_supported"]
    tokens, _ = await full_flow(client, app, acr_values="1 2")
    claims = await verify_id_token(client, tokens["id_token"], app.id)
    assert claims["acr"] == "1" and claims["amr"] == ["pwd"]


def _routed(client: TestClient, method: str, path: str) -> bool:
    return any(
        r.method == method and r.resource is not None and r.resource.canonical == path
        for r in client.app.router.routes()
    )


async def test_revoking_a_consent_asks_again_and_ends_the_tokens(client: TestClient) -> None:
    """OP-25: DELETE /me/consents/{client_id} (the user's bearer token) → 204; the next
    authorization shows the consent page again; the refresh token and access token issued
    under the old consent are dead (invalid_grant, 401 at userinfo)."""
    if not _routed(client, "DELETE", "/me/consents/{client_id}"):
        pytest.skip("/me/consents is not merged from oidc-data yet")
    await register_user(client)
    app = await register_client(client)
    tokens, _ = await full_flow(client, app, scope="openid offline_access")
    resp = await client.post("/login", json={"email": "alice@example.com", "password": PASSWORD})
    access = (await resp.json())["access_token"]
    listed = await (await client.get("/me/consents", headers=bearer(access))).json()
    assert [c["client_id"] for c in listed["items"]] == [app.id]
    resp = await client.delete(f"/me/consents/{app.id}", headers=bearer(access))
    assert resp.status == 204
    resp = await refresh(client, app, tokens["refresh_token"])
    assert resp.status == 400 and (await resp.json())["error"] == "invalid_grant"
    resp = await client.get("/oauth/userinfo", headers=bearer(tokens["access_token"]))
    assert resp.status == 401
    _, challenge = pkce()
    resp = await authorize(client, auth_params(app, challenge, scope="openid offline_access"))
    assert resp.headers["Location"].startswith("/ui/consent?")
